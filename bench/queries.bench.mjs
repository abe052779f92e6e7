// SQL statements per request on the intake and read paths,
// counted by PostgreSQL itself: pg_stat_statements (loaded at server start; BEGIN,
// COMMIT and SAVEPOINT count as statements, as they are round trips too). For each request
// kind, BENCH_QUERY_REQUESTS requests are sent one after the other after a warm-up, and the
// statements the database ran in between are divided by that count; the statements of a JSON
// submission are listed with their calls per submission. A count, not a speed: no ratio and no
// goal (the aim is "a few round trips"). The built collect-api runs as its own
// process (no worker: nothing else talks to the database) on embedded PostgreSQL + redis-server.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../libs/testing/dist/index.js';
import { createForm, must, report, sleep, SMALL_FORM_FIELDS, smallSubmission, startCollect, startPostgresWithStatements, userToken } from './bench-helpers.mjs';
import { openRosaPhotoBody, photoJpeg, PHOTO_FORM_FIELDS } from './intake-fixtures.mjs';

const REQUESTS = Number(process.env.BENCH_QUERY_REQUESTS ?? 100);
const pg = createRequire(fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)))('pg');

const server = await startPostgresWithStatements(pg);
const redis = await startRedis();
let collect;
let db;
try {
  collect = await startCollect({ pg: server, redis, database: 'bench_collect_queries' });
  db = new pg.Client({ connectionString: collect.databaseUrl });
  await db.connect();
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const base = collect.url;
  const token = await userToken(base);
  const form = await createForm(base, token, { id_string: 'bench', title: 'Bench', fields: SMALL_FORM_FIELDS });
  await createForm(base, token, { id_string: 'bench_photo', title: 'Bench photo', fields: PHOTO_FORM_FIELDS });
  const jpeg = await photoJpeg(100 * 1024);

  const kinds = {
    'GET /api/v1/user (Token)': () => must(fetch(`${base}/api/v1/user`, { headers: { authorization: token } }), 200),
    'JSON submission': () => must(fetch(`${base}/api/v1/submissions`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: smallSubmission('bench') }), 201),
    'OpenRosa submission with a 100 KB JPEG': () => {
      const { body, contentType } = openRosaPhotoBody('bench_photo', jpeg);
      return must(fetch(`${base}/submission`, { method: 'POST', headers: { authorization: token, 'content-type': contentType }, body }), 201);
    },
    'GET /api/v1/data/{form}?page_size=100': () => must(fetch(`${base}/api/v1/data/${form.formid}?page_size=100`, { headers: { authorization: token } }), 200),
  };
  // Our own statements (reset, read) are left out by their text; the idle count shows what else runs.
  const statements = async () => (await db.query(
    `SELECT query, calls::int FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%' ORDER BY calls DESC, query`,
  )).rows;
  const reset = () => db.query('SELECT pg_stat_statements_reset()');

  for (const run of Object.values(kinds)) for (let i = 0; i < 20; i++) await run(); // warm-up: caches, prepared paths
  await reset();
  await sleep(1000);
  const idle = (await statements()).reduce((n, s) => n + s.calls, 0);
  console.log(`statements while idle for 1 s (background): ${idle}`);

  const perRequest = {};
  for (const [kind, run] of Object.entries(kinds)) {
    await reset();
    for (let i = 0; i < REQUESTS; i++) await run();
    const rows = await statements();
    perRequest[kind] = rows;
    report(`queries per ${kind}`, rows.reduce((n, s) => n + s.calls, 0) / REQUESTS, { digits: 1 });
  }
  console.log(`statements of one JSON submission (calls per submission, ${REQUESTS} submissions):`);
  for (const s of perRequest['JSON submission']) console.log(`  ${(s.calls / REQUESTS).toFixed(2).padStart(5)}  ${s.query.replace(/\s+/g, ' ').slice(0, 160)}`);
} finally {
  await db?.end().catch(() => {});
  await collect?.stop();
  await redis.stop();
  await server.stop();
}
