// Media listing and downloads at scale (docs/media.md).
// - GET /api/v1/media?xform=<form>&page_size=100 latency at 1,000,000 attachments ÷ at 1,000
//   (two forms of the same user in the same database; goal ≤ 1.5), also with `type=`;
// - GET /api/v1/media/count?xform=<form> at 1,000,000 attachments, milliseconds;
// - peak RSS growth of the API process while streaming a 1 GB attachment (goal < 64 MB).
// Rows are seeded with generate_series directly in PostgreSQL (bench only); the 1 GB file is
// written to the storage directory by this script and deleted afterwards.
// The built collect-api runs as its own process on embedded PostgreSQL + redis-server.
import { createRequire } from 'node:module';
import { mkdtempSync, mkdirSync, openSync, writeSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { COLLECT_MAIN, median, must, rssGrowthDuring, startService } from './bench-helpers.mjs';
import { mediaParent } from './media-volume.mjs';

const require = createRequire(new URL('../apps/collect-api/package.json', import.meta.url));
const pg = require('pg');

const BIG = Number(process.env.BENCH_MEDIA_ROWS ?? 1_000_000);
const SMALL = 1_000;
const FILE_MB = Number(process.env.BENCH_MEDIA_FILE_MB ?? 1024);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);

const postgres = await startPostgres({ fast: true });
const redis = await startRedis();
const port = await freePort();
const mediaRoot = mkdtempSync(join(mediaParent(), 'bench-media-'));
let api;
let db;
try {
  const databaseUrl = await postgres.createDatabase('bench_collect_media');
  api = await startService(
    'api',
    COLLECT_MAIN,
    { NODE_ENV: 'test', COLLECT_PORT: String(port), COLLECT_HOST: '127.0.0.1', DATABASE_URL: databaseUrl, REDIS_URL: redis.url, REDIS_PREFIX: 'bench', MEDIA_ROOT: mediaRoot },
    port,
  );
  const base = api.url;
  const user = { username: 'bench', password: 'bench-password', email: 'bench@example.org' };
  await must(fetch(`${base}/api/v1/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(user) }), 201);
  const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const me = await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: basic } }), 200)).json();
  const token = `Token ${me.api_token}`;
  const mkForm = async (id) =>
    (await (await must(fetch(`${base}/api/v1/forms`, {
      method: 'POST', headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ id_string: id, title: id, fields: [{ name: 'age', type: 'integer' }, { name: 'photo', type: 'image' }, { name: 'voice', type: 'audio' }, { name: 'clip', type: 'video' }, { name: 'doc', type: 'file' }] }),
    }), 201)).json()).formid;
  const small = await mkForm('bench_small');
  const big = await mkForm('bench_big');

  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const t0 = Date.now();
  await seed(db, small, SMALL, me.id);
  await seed(db, big, BIG, me.id);
  await db.query('VACUUM ANALYZE attachments');
  await db.query('VACUUM ANALYZE submissions');
  await db.query('VACUUM ANALYZE media_counts');
  console.log(`seeded ${SMALL} + ${BIG} attachment rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const auth = { authorization: token };
  const cases = {
    page1k: `${base}/api/v1/media?xform=${small}&page_size=100`,
    page1m: `${base}/api/v1/media?xform=${big}&page_size=100`,
    typed1k: `${base}/api/v1/media?xform=${small}&type=video&page_size=100`,
    typed1m: `${base}/api/v1/media?xform=${big}&type=video&page_size=100`,
    count1m: `${base}/api/v1/media/count?xform=${big}`,
    // Informational: the last page walks the whole index (OFFSET), see docs/media.md limits.
    last1m: `${base}/api/v1/media?xform=${big}&page_size=100&page=${Math.ceil(BIG / 100)}`,
  };
  const check = await (await must(fetch(cases.page1m, { headers: auth }), 200)).json();
  const total = (await must(fetch(cases.page1m, { headers: auth }), 200)).headers.get('x-total-count');
  if (check.length !== 100 || Number(total) !== BIG) throw new Error(`unexpected listing: ${check.length} items, X-Total-Count ${total}`);
  const count = await (await must(fetch(cases.count1m, { headers: auth }), 200)).json();
  if (count.count !== BIG) throw new Error(`unexpected count ${JSON.stringify(count)}`);
  for (const url of Object.values(cases)) await latency(url, auth, 1);
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [name, url] of Object.entries(cases)) results[name].push(await latency(url, auth, DURATION));
  const ms = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  console.log(`page of 100 at ${SMALL}: ${ms.page1k.toFixed(2)} ms; at ${BIG}: ${ms.page1m.toFixed(2)} ms (mean latency, median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  console.log(`page of 100 with type=video at ${SMALL}: ${ms.typed1k.toFixed(2)} ms; at ${BIG}: ${ms.typed1m.toFixed(2)} ms`);
  console.log(`ratio media-page-100 ${BIG}/${SMALL}: ${(ms.page1m / ms.page1k).toFixed(2)} (goal <= 1.5)`);
  console.log(`ratio media-page-100-type ${BIG}/${SMALL}: ${(ms.typed1m / ms.typed1k).toFixed(2)}`);
  console.log(`count at ${BIG}: ${ms.count1m.toFixed(2)} ms per request (GET /api/v1/media/count?xform=, ${CONNECTIONS} connections)`);
  console.log(`last page of 100 at ${BIG} (page ${Math.ceil(BIG / 100)}): ${ms.last1m.toFixed(2)} ms (informational: OFFSET walks the index)`);
  const sqlStart = process.hrtime.bigint();
  await db.query('SELECT count(*) FROM attachments WHERE form_id = $1 AND deleted_at IS NULL', [big]);
  console.log(`reference: SELECT count(*) over the same rows: ${(Number(process.hrtime.bigint() - sqlStart) / 1e6).toFixed(1)} ms`);

  // 1 GB download: peak RSS growth of the API process while a client reads it all.
  const rel = `bench/attachments/${big}_bench_big/huge.bin`;
  const file = join(mediaRoot, rel);
  mkdirSync(join(mediaRoot, `bench/attachments/${big}_bench_big`), { recursive: true });
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(1 << 20, 0x5a);
  for (let i = 0; i < FILE_MB; i++) writeSync(fd, chunk);
  closeSync(fd);
  const bytes = FILE_MB * (1 << 20);
  const { rows: [sub] } = await db.query(`SELECT id FROM submissions WHERE form_id = $1 ORDER BY id LIMIT 1`, [big]);
  const { rows: [att] } = await db.query(
    `INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size) VALUES ($1, $2, $3, 'huge.bin', 'application/octet-stream', $4) RETURNING id`,
    [sub.id, big, rel, bytes],
  );
  const { value: received, beforeMb, growthMb, seconds } = await rssGrowthDuring(api.child.pid, async () => {
    const res = await must(fetch(`${base}/api/v1/media/${att.id}.bin`, { headers: auth }), 200);
    let received = 0;
    for await (const part of res.body) received += part.length;
    return received;
  });
  rmSync(file, { force: true });
  if (received !== bytes) throw new Error(`streamed ${received} of ${bytes} bytes`);
  console.log(`streamed ${FILE_MB} MB in ${seconds.toFixed(1)} s; RSS before ${beforeMb.toFixed(0)} MB, peak ${(beforeMb + growthMb).toFixed(0)} MB, growth ${growthMb.toFixed(1)} MB`);
  console.log(`ratio rss-growth/64MB while streaming ${FILE_MB} MB: ${(growthMb / 64).toFixed(2)} (goal < 1)`);
} finally {
  await db?.end().catch(() => {});
  await api?.stop();
  await redis.stop();
  await postgres.stop();
  rmSync(mediaRoot, { recursive: true, force: true });
}

/** `n` attachments on form `formId`: n/4 submissions with an image, audio, video and PDF each. */
async function seed(client, formId, n, userId) {
  const subs = Math.ceil(n / 4);
  await client.query('BEGIN');
  const { rows } = await client.query(
    `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id)
     SELECT $1::int, 'bench-' || $1::int || '-' || g, jsonb_build_object('age', (g % 90)::text), '<data/>', md5(g::text), $3
     FROM generate_series(1, $2::int) g RETURNING id`,
    [formId, subs, userId],
  );
  const first = rows[0].id;
  await client.query(
    `INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath)
     SELECT $2::int + (g / 4), $1::int, 'bench/attachments/' || $1::int || '/f' || g || '.' || (ARRAY['jpg','wav','avi','pdf'])[g % 4 + 1],
            'f' || g || '.' || (ARRAY['jpg','wav','avi','pdf'])[g % 4 + 1],
            (ARRAY['image/jpeg','audio/wav','video/x-msvideo','application/pdf'])[g % 4 + 1], 1000,
            (ARRAY['photo','voice','clip','doc'])[g % 4 + 1]
     FROM generate_series(0, $3::int - 1) g`,
    [formId, first, n],
  );
  await client.query('COMMIT');
}

async function latency(url, headers, seconds) {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds });
  const bad = result.errors + result.non2xx;
  if (bad > 0) throw new Error(`${url}: ${bad} unexpected answers of ${result.requests.total}`);
  return result.latency.average;
}

