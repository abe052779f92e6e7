// Entities at intake and out (docs/entities.md, "Benches"), in one run:
// - OpenRosa intake of a registration submission (creates an entity) per second ÷ the same form
//   without its entity block; goal >= 0.7;
// - intake of a follow-up submission that updates an entity ÷ the same form without its entity
//   block; goal >= 0.6;
// - the follow-up form's list attachment (CSV) of 100,000 entities: peak RSS growth of the API
//   while a client reads it; goal < 64 MB;
// - intake of a registration whose form also asks for a photo (one 100 KB JPEG sent with it) ÷
//   the same form without its entity block, printed for reading, in rounds of its own after the
//   others', each window after a `sync` (docs/entities.md, "Intake: one statement");
// - GET /xformsManifest of the follow-up form (an entity list with 100,000 entities) per second
//   against the manifest of a form without entity lists: time ratio (plain rate ÷ follow-up
//   rate); goal <= 2.
// The built collect-api runs as its own process on embedded PostgreSQL + redis-server;
// autocannon drives it. BENCH_ENTITY_ROWS makes the list smaller. BENCH_CPU_PROF=<dir> profiles
// the API; windows per intake case: register, register-plain, update, update-plain,
// register-photo, register-photo-plain.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { median, must, postmasterPidOf, report, requestsPerSecond, rssGrowthDuring, startCollect, userToken, writeProfileWindows } from './bench-helpers.mjs';
import { pairedRatio, roundsWithCpu } from './cpu-rounds.mjs';
import { benchInstance, benchXForm, publishXForm } from './entity-fixtures.mjs';
import { photoJpeg } from './intake-fixtures.mjs';

const require = createRequire(new URL('../apps/collect-api/package.json', import.meta.url));
const pg = require('pg');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROWS = Number(process.env.BENCH_ENTITY_ROWS ?? 100_000);
const MB = 1 << 20;

const postgres = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
let db;
try {
  collect = await startCollect({ pg: postgres, redis, database: 'bench_collect_entities' });
  const base = collect.url;
  const token = await userToken(base);
  const auth = { authorization: token };
  await publishXForm(base, token, benchXForm('bench_register', 'register'));
  await publishXForm(base, token, benchXForm('bench_register_plain', 'register', { entities: false }));
  const followUp = await publishXForm(base, token, benchXForm('bench_followup', 'follow-up'));
  await publishXForm(base, token, benchXForm('bench_followup_plain', 'follow-up', { entities: false }));
  const plainManifestForm = await publishXForm(base, token, benchXForm('bench_manifest_plain', 'register', { entities: false }));
  await publishXForm(base, token, benchXForm('bench_register_photo', 'register', { photo: true }));
  await publishXForm(base, token, benchXForm('bench_register_photo_plain', 'register', { entities: false, photo: true }));
  const jpeg = await photoJpeg(100 * 1024);
  db = new pg.Client({ connectionString: collect.databaseUrl });
  await db.connect();
  const [{ id: listId }] = (await db.query(`SELECT id FROM entity_lists WHERE name = 'plots'`)).rows;

  // Entities the update rounds change, one after the other, each with the version it has
  // (no conflict: the bench measures the update itself).
  const targets = [];
  let next = 0;
  const updateBody = () => {
    const t = targets[next++ % targets.length];
    const { body } = benchInstance('bench_followup', { plot: t.uuid, entity: { dataset: 'plots', id: t.uuid, update: '1', baseVersion: String(t.version) } }, 'benchboundary');
    t.version++;
    return body;
  };
  const multipart = { authorization: token, 'content-type': 'multipart/form-data; boundary=benchboundary' };
  const cases = {
    register: {
      label: 'POST /submission, registration (creates an entity)', url: `${base}/submission`, method: 'POST', headers: multipart, expect: 201,
      setupRequest: (req) => ({ ...req, body: benchInstance('bench_register', { entity: { dataset: 'plots', id: randomUUID(), create: '1' } }, 'benchboundary').body }),
    },
    'register-plain': {
      label: 'POST /submission, the same form without entities', url: `${base}/submission`, method: 'POST', headers: multipart, expect: 201,
      setupRequest: (req) => ({ ...req, body: benchInstance('bench_register_plain', {}, 'benchboundary').body }),
    },
    update: { label: 'POST /submission, follow-up (updates an entity)', url: `${base}/submission`, method: 'POST', headers: multipart, expect: 201, setupRequest: (req) => ({ ...req, body: updateBody() }) },
    'update-plain': {
      label: 'POST /submission, the same follow-up form without entities', url: `${base}/submission`, method: 'POST', headers: multipart, expect: 201,
      setupRequest: (req) => ({ ...req, body: benchInstance('bench_followup_plain', { plot: 'x' }, 'benchboundary').body }),
    },
  };
  // Registrations with a photo: rounds of their own, after the goals' (their files' writeback stays out of those windows).
  const photoCases = {
    'register-photo': {
      label: 'POST /submission, registration with a photo', url: `${base}/submission`, method: 'POST', headers: multipart, expect: 201,
      setupRequest: (req) => ({ ...req, body: benchInstance('bench_register_photo', { entity: { dataset: 'plots', id: randomUUID(), create: '1' }, photo: jpeg }, 'benchboundary').body }),
    },
    'register-photo-plain': {
      label: 'POST /submission, the same form with a photo, without entities', url: `${base}/submission`, method: 'POST', headers: multipart, expect: 201,
      setupRequest: (req) => ({ ...req, body: benchInstance('bench_register_photo_plain', { photo: jpeg }, 'benchboundary').body }),
    },
  };
  // Warm-up, which also registers the entities the update rounds change.
  await requestsPerSecond(cases.register, 2, CONNECTIONS);
  await requestsPerSecond(cases['register-plain'], 1, CONNECTIONS);
  for (const r of (await db.query(`SELECT uuid::text AS uuid, version FROM entities WHERE list_id = $1 ORDER BY id`, [listId])).rows) targets.push(r);
  console.log(`${targets.length} entities registered by the warm-up; the update rounds change them in turn`);
  await requestsPerSecond(cases.update, 1, CONNECTIONS);
  await requestsPerSecond(cases['update-plain'], 1, CONNECTIONS);
  const apiPid = collect.api.child.pid;
  const postmaster = await postmasterPidOf(pg, postgres.adminUrl);
  const { results, rate } = await roundsWithCpu(cases, { rounds: ROUNDS, duration: DURATION, connections: CONNECTIONS, apiPid, postmaster });
  const { rows: [errors] } = await db.query(`SELECT count(*)::int AS n FROM submissions WHERE json ? '_entity_errors'`).catch(() => ({ rows: [{ n: 'n/a' }] }));
  console.log(`submissions with entity errors: ${errors.n}`);
  // Each ratio is the median of the rounds' own ratios (pairedRatio).
  const paired = (a, b) => pairedRatio(results, rate, a, b);
  report('ratio registration-intake/plain', paired('register', 'register-plain'), { goal: '>= 0.7' });
  report('ratio update-intake/plain', paired('update', 'update-plain'), { goal: '>= 0.6' });

  for (const c of Object.values(photoCases)) await requestsPerSecond(c, 1, CONNECTIONS);
  // Every window starts with no dirty pages: it pays for the writeback of its own photos only.
  const photos = await roundsWithCpu(photoCases, { rounds: ROUNDS, duration: DURATION, connections: CONNECTIONS, apiPid, postmaster, before: () => execFileSync('sync') });
  report('ratio registration-with-photo-intake/plain-with-photo', pairedRatio(photos.results, photos.rate, 'register-photo', 'register-photo-plain'));
  writeProfileWindows();
  execFileSync('sync');

  // The list grows to ROWS entities (inserted in PostgreSQL), its revision raised as a change would.
  const have = Number((await db.query(`SELECT count(*) FROM entities WHERE list_id = $1`, [listId])).rows[0].count);
  const t0 = Date.now();
  await db.query(
    `INSERT INTO entities (list_id, uuid, label, data, version)
     SELECT $1, gen_random_uuid(), 'Plot ' || g, jsonb_build_object('crop', 'crop ' || (g % 50), 'area_ha', (g % 997)::text, 'owner', 'owner, "' || g || '"'), 1
     FROM generate_series(1, $2::int) g`,
    [listId, Math.max(0, ROWS - have)],
  );
  await db.query(`UPDATE entity_lists SET revision = revision + 1 WHERE id = $1`, [listId]);
  await db.query('VACUUM ANALYZE entities');
  console.log(`list of ${ROWS} entities seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const manifestXml = await (await must(fetch(`${base}/xformsManifest/${followUp}`, { headers: auth }), 200)).text();
  const url = /<downloadUrl>([^<]*entity-list[^<]*)<\/downloadUrl>/.exec(manifestXml)?.[1];
  if (!url) throw new Error(`no entity list in the manifest: ${manifestXml}`);
  const { value: { bytes, lines }, beforeMb, growthMb: growth, seconds } = await rssGrowthDuring(collect.api.child.pid, async () => {
    const res = await must(fetch(url.replace(/^https?:\/\/[^/]+/, base), { headers: auth }), 200);
    let bytes = 0;
    let lines = 0;
    for await (const chunk of Readable.fromWeb(res.body)) {
      bytes += chunk.length;
      for (const c of chunk) if (c === 10) lines++;
    }
    return { bytes, lines };
  }, { settleMs: 500 });
  if (lines !== ROWS + 1) throw new Error(`the CSV has ${lines} lines, expected ${ROWS + 1}`);
  console.log(`list CSV of ${ROWS} entities: ${(bytes / MB).toFixed(1)} MB in ${seconds.toFixed(1)} s; API RSS before ${beforeMb.toFixed(0)} MB, growth ${growth.toFixed(1)} MB`);
  report(`rss-growth streaming the list attachment of ${ROWS} entities`, growth, { goal: '< 64', unit: 'MB', digits: 1 });

  const manifests = {
    followUp: { label: `GET /xformsManifest, follow-up form (list of ${ROWS})`, url: `${base}/xformsManifest/${followUp}`, headers: auth },
    plain: { label: 'GET /xformsManifest, form without entity lists', url: `${base}/xformsManifest/${plainManifestForm}`, headers: auth },
  };
  for (const c of Object.values(manifests)) await requestsPerSecond(c, 1, CONNECTIONS);
  const mrates = { followUp: [], plain: [] };
  for (let r = 0; r < ROUNDS; r++) for (const [key, c] of Object.entries(manifests)) mrates[key].push(await requestsPerSecond(c, DURATION, CONNECTIONS));
  const m = { followUp: median(mrates.followUp), plain: median(mrates.plain) };
  for (const [key, rps] of Object.entries(m)) console.log(`${manifests[key].label}: ${Math.round(rps)} req/s`);
  report('ratio manifest-time follow-up/plain', m.plain / m.followUp, { goal: '<= 2' });
} finally {
  await db?.end();
  await collect?.stop();
  await redis.stop();
  await postgres.stop();
}
