// Exports and media archives at size (docs/exports.md, docs/media.md):
// - peak RSS growth of the API process while a client reads the CSV and the XLSX export of
//   100,000 submissions with repeats (goal < 64 MB each), and of the worker process while it
//   writes the same exports asked for asynchronously (POST /api/v1/export);
// - peak RSS growth while it streams a 2 GB media archive (GET /api/v1/media.zip?xform=)
//   (goal < 64 MB); the archive is then unzipped (yauzl) and every file compared byte for byte
//   (the bench fails on any difference).
// Rows are inserted with generate_series directly in PostgreSQL and the files are written
// sparse (a random 64 KB head, then a hole) so that the bench runs in a few minutes.
// BENCH_EXPORT_ROWS and BENCH_ARCHIVE_MB make it smaller.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, ftruncateSync, mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { createForm, must, report, rssGrowthDuring, startCollect, userToken } from './bench-helpers.mjs';

const require = createRequire(new URL('../apps/collect-api/package.json', import.meta.url));
const rootRequire = createRequire(new URL('../package.json', import.meta.url));
const pg = require('pg');
const yauzl = rootRequire('yauzl');

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 100_000);
const ARCHIVE_MB = Number(process.env.BENCH_ARCHIVE_MB ?? 2048);
const FILE_MB = 16;
const MB = 1 << 20;

const postgres = await startPostgres({ fast: true });
const redis = await startRedis();
const scratch = mkdtempSync(join(tmpdir(), 'bench-exports-'));
let collect;
let db;
try {
  collect = await startCollect({ pg: postgres, redis, database: 'bench_collect_exports', worker: true });
  const base = collect.url;
  const token = await userToken(base);
  const auth = { authorization: token };
  const me = await (await must(fetch(`${base}/api/v1/user`, { headers: auth }), 200)).json();
  const fields = [
    { name: 'name', type: 'text' }, { name: 'age', type: 'integer' }, { name: 'photo', type: 'image' },
    { name: 'g', type: 'group', children: [{ name: 'a', type: 'text' }] },
    { name: 'kids', type: 'repeat', children: [{ name: 'kid', type: 'text' }, { name: 'kid_age', type: 'integer' }] },
  ];
  const form = (await createForm(base, token, { id_string: 'bench_export', title: 'Export', fields })).formid;
  db = new pg.Client({ connectionString: collect.databaseUrl });
  await db.connect();
  const t0 = Date.now();
  await db.query(
    `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id)
     SELECT $1::int, 'e-' || g, jsonb_build_object('name', 'name ' || g, 'age', (g % 100)::text, 'g/a', 'text, with "quotes" ' || g,
       'kids', (SELECT jsonb_agg(jsonb_build_object('kids/kid', 'kid ' || g || '-' || k, 'kids/kid_age', (k * 3)::text)) FROM generate_series(1, 1 + g % 3) k)),
       '', '', $2::int
     FROM generate_series(1, $3::int) g`,
    [form, me.id, ROWS],
  );
  await db.query('VACUUM ANALYZE submissions');
  console.log(`seeded ${ROWS} submissions with 1-3 repeat instances each in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  /** Reads `url` to the end (into `file` when given), sampling the API's RSS; answers growth in MB, bytes and seconds. */
  const streamed = async (url, file) => {
    const { value: bytes, beforeMb, growthMb, seconds } = await rssGrowthDuring(collect.api.child.pid, async () => {
      const res = await must(fetch(url, { headers: auth }), 200);
      let bytes = 0;
      const counting = async function* (source) {
        for await (const chunk of source) {
          bytes += chunk.length;
          yield chunk;
        }
      };
      if (file) await pipeline(Readable.fromWeb(res.body), counting, createWriteStream(file));
      else for await (const chunk of counting(Readable.fromWeb(res.body))) void chunk;
      return bytes;
    }, { settleMs: 500 });
    return { growth: growthMb, before: beforeMb, bytes, seconds };
  };

  for (const format of ['csv', 'xlsx']) {
    const r = await streamed(`${base}/api/v1/data/${form}.${format}`);
    console.log(`${format.toUpperCase()} of ${ROWS} submissions: ${(r.bytes / MB).toFixed(1)} MB in ${r.seconds.toFixed(1)} s; API RSS before ${r.before.toFixed(0)} MB, growth ${r.growth.toFixed(1)} MB`);
    report(`rss-growth exporting ${ROWS} submissions as ${format}`, r.growth, { goal: '< 64', unit: 'MB', digits: 1 });
  }

  // The same exports asked for asynchronously: the worker process writes them (docs/exports.md).
  for (const format of ['csv', 'xlsx']) {
    const { value: state, beforeMb, growthMb: growth, seconds } = await rssGrowthDuring(collect.worker.child.pid, async () => {
      const created = await (await must(fetch(`${base}/api/v1/export`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ xform: form, format }) }), 202)).json();
      let state = created;
      while (state.status === 'pending' || state.status === 'running') {
        await new Promise((r) => setTimeout(r, 200));
        state = await (await must(fetch(`${base}/api/v1/export/${created.id}`, { headers: auth }), 200)).json();
      }
      return state;
    }, { settleMs: 500 });
    if (state.status !== 'done') throw new Error(`asynchronous ${format} export: ${state.status} ${state.error}`);
    console.log(`asynchronous ${format.toUpperCase()} of ${ROWS} submissions written by the worker in ${seconds.toFixed(1)} s; worker RSS before ${beforeMb.toFixed(0)} MB, growth ${growth.toFixed(1)} MB`);
    report(`worker rss-growth writing an asynchronous ${format} export of ${ROWS} submissions`, growth, { goal: '< 64', unit: 'MB', digits: 1 });
  }

  // Media archive: ARCHIVE_MB in files of FILE_MB, each a random head and a sparse hole.
  const files = Math.max(1, Math.round(ARCHIVE_MB / FILE_MB));
  const dir = `bench/attachments/${form}_bench_export`;
  mkdirSync(join(collect.mediaRoot, dir), { recursive: true });
  const { rows: subs } = await db.query(`SELECT id, uuid FROM submissions WHERE form_id = $1 ORDER BY id LIMIT $2`, [form, files]);
  const expected = new Map();
  for (let i = 0; i < files; i++) {
    const rel = `${dir}/photo-${i}.jpg`;
    const head = randomBytes(64 * 1024);
    const fd = openSync(join(collect.mediaRoot, rel), 'w');
    writeSync(fd, head);
    ftruncateSync(fd, FILE_MB * MB);
    closeSync(fd);
    await db.query(`INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size) VALUES ($1, $2, $3, $4, 'image/jpeg', $5)`, [subs[i].id, form, rel, `photo-${i}.jpg`, FILE_MB * MB]);
    const hash = createHash('sha256');
    await pipeline(createReadStream(join(collect.mediaRoot, rel)), hash);
    expected.set(`${subs[i].uuid}/photo-${i}.jpg`, hash.digest('hex'));
  }
  const zipFile = join(scratch, 'media.zip');
  const z = await streamed(`${base}/api/v1/media.zip?xform=${form}`, zipFile);
  console.log(`media.zip of ${files} files, ${(z.bytes / MB).toFixed(0)} MB, in ${z.seconds.toFixed(1)} s; API RSS before ${z.before.toFixed(0)} MB, growth ${z.growth.toFixed(1)} MB`);
  const seen = await unzipHashes(zipFile);
  rmSync(zipFile, { force: true });
  for (const [name, hash] of expected) if (seen.get(name) !== hash) throw new Error(`media.zip: ${name} differs or is missing`);
  if (seen.size !== expected.size) throw new Error(`media.zip: ${seen.size} entries, expected ${expected.size}`);
  console.log(`unzipped ${seen.size} entries: every file byte-exact`);
  report(`rss-growth streaming a ${(z.bytes / MB / 1024).toFixed(1)} GB media archive`, z.growth, { goal: '< 64', unit: 'MB', digits: 1 });
} finally {
  await db?.end().catch(() => {});
  await collect?.stop();
  await redis.stop();
  await postgres.stop();
  rmSync(scratch, { recursive: true, force: true });
}

/** sha256 of every entry of a ZIP file, by entry name (yauzl). */
function unzipHashes(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out = new Map();
      zip.on('entry', (entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const hash = createHash('sha256');
          stream.on('data', (c) => hash.update(c));
          stream.on('end', () => {
            out.set(entry.fileName, hash.digest('hex'));
            zip.readEntry();
          });
          stream.on('error', reject);
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}
