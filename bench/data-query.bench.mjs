// The data query API at scale (docs/data-api.md):
// - GET /api/v1/data/{form}?query={"code": "..."} (an equality, one match) at 1,000,000
//   submissions ÷ the same at 10,000 (same form, rows added in between); goal <= 2; the plan of
//   its statement must use the GIN index submissions_json_path_idx (checked, the bench fails
//   otherwise);
// - range queries at 1,000,000 (numeric `$gt` on an integer, `_submission_time` range, a sort
//   on a number), milliseconds per request: the costs docs/data-api.md quotes.
// Rows are inserted with generate_series directly in PostgreSQL (bench only). The built
// collect-api runs as its own process on embedded PostgreSQL + redis-server.
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { createForm, median, must, report, startCollect, userToken } from './bench-helpers.mjs';
import { SubmissionDataService } from '../apps/collect-api/dist/submissions/submission-data.service.js';
import { SubmissionDataRepository } from '../apps/collect-api/dist/submissions/submission-data.repository.js';

const require = createRequire(new URL('../apps/collect-api/package.json', import.meta.url));
const pg = require('pg');

const SMALL = 10_000;
const BIG = Number(process.env.BENCH_DATA_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);

const postgres = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
let db;
try {
  collect = await startCollect({ pg: postgres, redis, database: 'bench_collect_data_query' });
  const base = collect.url;
  const token = await userToken(base);
  const me = await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: token } }), 200)).json();
  const form = (await createForm(base, token, { id_string: 'bench_query', title: 'Query', fields: [{ name: 'code', type: 'text' }, { name: 'age', type: 'integer' }, { name: 'district', type: 'text' }] })).formid;
  db = new pg.Client({ connectionString: collect.databaseUrl });
  await db.connect();

  const auth = { authorization: token };
  const url = (params) => `${base}/api/v1/data/${form}?${new URLSearchParams(params)}`;
  const equality = (n) => url({ query: JSON.stringify({ code: `c${n}` }), page_size: '100' });

  const seedTo = async (from, to) => {
    const t0 = Date.now();
    // The index is dropped for the bulk insert and built again after (as a bulk load would).
    await db.query('DROP INDEX IF EXISTS submissions_json_path_idx');
    await db.query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, date_created, date_modified)
       SELECT $1::int, 'q-' || g, jsonb_build_object('code', 'c' || g, 'age', (g % 100)::text, 'district', 'd' || (g % 50)), '', '', $2::int,
              timestamptz '2026-01-01' + g * interval '1 second', now()
       FROM generate_series($3::int, $4::int) g`,
      [form, me.id, from, to],
    );
    await db.query('CREATE INDEX submissions_json_path_idx ON submissions USING gin (json jsonb_path_ops)');
    await db.query('VACUUM ANALYZE submissions');
    console.log(`seeded submissions ${from}..${to} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };

  /** The plan of the data page's statements for an equality (EXPLAIN of the same SQL shape the API runs). */
  const plan = async (code) => {
    const { rows } = await db.query(
      `EXPLAIN SELECT s.id FROM submissions s LEFT JOIN users u ON u.id = s.submitted_by_id
       WHERE s.form_id = $1 AND s.deleted_at IS NULL AND ((s.json @> $2::jsonb)) ORDER BY s.id ASC OFFSET 0 LIMIT 100`,
      [form, JSON.stringify({ code })],
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  };

  /**
   * The statements the API runs for a data page (one: the page and
   * its count together), captured from the built
   * repository and service with a recording stand-in for the DataSource, then timed by
   * PostgreSQL itself (EXPLAIN ANALYZE, median of `n`): server time, less noisy than latency on
   * a shared machine. Answers { ms, plans }.
   */
  const serverTime = async (read, n = 7) => {
    const captured = [];
    // A page is one statement answering one row (total, the documents' text, ...); an empty one
    // ends the capture there (submission-data.repository.ts `docs`).
    const emptyPage = { total: 0, ok: true, n: 0, text: null, geo: null, forms: null, attachments: null };
    const recorder = { query: async (sql, params) => (captured.push([sql, params]), [emptyPage]), createQueryRunner: () => { throw new Error('no cursor in capture'); } };
    const formRow = (await db.query('SELECT id, fields FROM forms WHERE id = $1', [form])).rows[0];
    const service = new SubmissionDataService(new SubmissionDataRepository(recorder), null, null, { PUBLIC_BASE_URL: 'http://x' });
    await service.page([{ id: formRow.id, fields: formRow.fields }], { offset: 0, limit: 100, page: 1, ...read });
    let total = 0;
    const plans = [];
    for (const [sql, params] of captured) {
      const times = [];
      for (let i = 0; i < n; i++) {
        const { rows } = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
        times.push(rows[0]['QUERY PLAN'][0]['Execution Time'] + rows[0]['QUERY PLAN'][0]['Planning Time']);
        if (i === 0) plans.push(JSON.stringify(rows[0]['QUERY PLAN'][0].Plan));
      }
      total += median(times);
    }
    return { ms: total, plans };
  };

  const latency = async (target, seconds) => {
    const r = await autocannon({ url: target, headers: auth, connections: CONNECTIONS, duration: seconds, timeout: 60 });
    if (r.non2xx || r.errors) throw new Error(`${target}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return r.latency.mean;
  };
  const measure = async (cases) => {
    for (const target of Object.values(cases)) await latency(target, 1);
    const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let r = 0; r < ROUNDS; r++) for (const [k, target] of Object.entries(cases)) results[k].push(await latency(target, DURATION));
    return Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  };
  const checkOne = async (target, expected) => {
    const res = await must(fetch(target, { headers: auth }), 200);
    const body = await res.json();
    if (body.length !== Math.min(expected, 100) || Number(res.headers.get('x-total-count')) !== expected) {
      throw new Error(`${target}: ${body.length} items, X-Total-Count ${res.headers.get('x-total-count')}, expected ${expected}`);
    }
  };

  await seedTo(1, SMALL);
  const smallPlan = await plan(`c${SMALL / 2}`);
  await checkOne(equality(SMALL / 2), 1);
  const small = await measure({ eq: equality(SMALL / 2) });
  const smallServer = await serverTime({ query: JSON.stringify({ code: `c${SMALL / 2}` }) });

  await seedTo(SMALL + 1, BIG);
  const bigPlan = await plan(`c${BIG / 2}`);
  console.log(`plan at ${BIG}:\n${bigPlan}`);
  if (!bigPlan.includes('submissions_json_path_idx')) throw new Error('the equality query does not use submissions_json_path_idx');
  if (!smallPlan.includes('submissions_json_path_idx')) console.log(`(at ${SMALL} the planner chose:\n${smallPlan})`);
  await checkOne(equality(BIG / 2), 1);
  const ranges = {
    eq: equality(BIG / 2),
    eqMany: url({ query: JSON.stringify({ district: 'd7' }), page_size: '100' }),
    gt: url({ query: JSON.stringify({ age: { $gt: 97 } }), page_size: '100' }),
    gtSorted: url({ query: JSON.stringify({ age: { $gt: 97 } }), sort: JSON.stringify({ age: -1 }), page_size: '100' }),
    time: url({ query: JSON.stringify({ _submission_time: { $gte: '2026-01-05T00:00:00', $lt: '2026-01-05T01:00:00' } }), page_size: '100' }),
    sortAll: url({ sort: JSON.stringify({ age: -1 }), page_size: '100' }),
    plain: url({ page_size: '100' }),
  };
  const bigServer = await serverTime({ query: JSON.stringify({ code: `c${BIG / 2}` }) });
  if (!bigServer.plans.every((p) => p.includes('submissions_json_path_idx'))) throw new Error(`a statement of the equality page does not use the index: ${bigServer.plans.join('\n')}`);
  const server = {
    gt: await serverTime({ query: JSON.stringify({ age: { $gt: 97 } }) }, 3),
    gtSorted: await serverTime({ query: JSON.stringify({ age: { $gt: 97 } }), sort: JSON.stringify({ age: -1 }) }, 3),
    time: await serverTime({ query: JSON.stringify({ _submission_time: { $gte: '2026-01-05T00:00:00', $lt: '2026-01-05T01:00:00' } }) }, 3),
    sortAll: await serverTime({ sort: JSON.stringify({ age: -1 }) }, 3),
    eqMany: await serverTime({ query: JSON.stringify({ district: 'd7' }) }, 3),
  };
  console.log(`server time (PostgreSQL, count + page statements) of the equality page: ${smallServer.ms.toFixed(2)} ms at ${SMALL}, ${bigServer.ms.toFixed(2)} ms at ${BIG}`);
  console.log(`server time at ${BIG}: ${Object.entries(server).map(([k, v]) => `${k} ${v.ms.toFixed(1)} ms`).join('; ')}`);
  const big = await measure(ranges);
  const shown = (k) => `${big[k].toFixed(1)} ms`;
  console.log(`equality, one match: ${small.eq.toFixed(2)} ms at ${SMALL}, ${big.eq.toFixed(2)} ms at ${BIG} (mean latency, median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  console.log(`at ${BIG}: equality with ${BIG / 50} matches ${shown('eqMany')}; age $gt 97 (2%) ${shown('gt')}; the same sorted by age ${shown('gtSorted')}; one hour of _submission_time ${shown('time')}; sort all by age ${shown('sortAll')}; no query ${shown('plain')}`);
  report(`ratio data-query-equality-server-time ${BIG}/${SMALL}`, bigServer.ms / smallServer.ms, { goal: '<= 2' });
  report(`ratio data-query-equality-latency ${BIG}/${SMALL}`, big.eq / small.eq);
  report(`data-query age-$gt-97 server time at ${BIG}`, server.gt.ms, { unit: 'ms', digits: 1 });
  report(`data-query _submission_time-hour server time at ${BIG}`, server.time.ms, { unit: 'ms', digits: 1 });
  report(`data-query sort-all-by-age server time at ${BIG}`, server.sortAll.ms, { unit: 'ms', digits: 1 });
} finally {
  await db?.end().catch(() => {});
  await collect?.stop();
  await redis.stop();
  await postgres.stop();
}
