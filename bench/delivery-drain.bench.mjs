// What one delivery costs with nothing else running (docs/benchmarks.md,
// "delivery-drain"): the worker process is stopped (SIGSTOP) while
// BENCH_DRAIN_COUNT submissions are posted to a form with one generic_json service towards a
// local receiver, then let go; from then until the last arrival, CPU µs per delivery of the
// worker (its main thread and V8's threads apart), the PostgreSQL server and this process (the
// receiver), from /proc, and the delivery statements per delivery (pg_stat_statements). Once
// for the small form of the other intake benches and once for the soak's 250-answer form, each
// BENCH_ROUNDS times (the first round of each warms the worker's code). Figures for reading, no
// goal: forwarding-cost.bench.mjs measures the same during intake, where the processes compete.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startRedis } from '../libs/testing/dist/index.js';
import {
  addJsonService, cpuOf, createForm, median, must, postgresCpu, postmasterPidOf, report, SMALL_FORM_FIELDS, smallSubmission, startCollect,
  startPostgresWithStatements, startReceiver, threadCpu, until, userToken,
} from './bench-helpers.mjs';
import { largeForm, largeSubmission } from './intake-fixtures.mjs';

const COUNT = Number(process.env.BENCH_DRAIN_COUNT ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const pg = createRequire(fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)))('pg');

const receiver = await startReceiver();
const pgServer = await startPostgresWithStatements(pg);
const redis = await startRedis();
let collect;
let db;
try {
  collect = await startCollect({ pg: pgServer, redis, database: 'bench_delivery_drain', worker: true });
  const base = collect.url;
  const token = await userToken(base);
  const headers = { authorization: token, 'content-type': 'application/json' };
  db = new pg.Client({ connectionString: collect.databaseUrl });
  await db.connect();
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const postmaster = await postmasterPidOf(pg, pgServer.adminUrl);
  const large = largeForm('drain_large', 250);
  const cases = {
    small: { form: { id_string: 'drain_small', title: 'Drain, small', fields: SMALL_FORM_FIELDS }, body: () => smallSubmission('drain_small') },
    '250-answer': { form: large, body: () => largeSubmission(large) },
  };
  for (const [name, c] of Object.entries(cases)) {
    const form = await createForm(base, token, c.form);
    await addJsonService(base, token, form.formid, receiver.url);
    const warm = receiver.arrivals.size;
    for (let i = 0; i < 100; i++) await must(fetch(`${base}/api/v1/submissions`, { method: 'POST', headers, body: c.body() }), 201);
    await until(() => receiver.arrivals.size >= warm + 100, 60_000, 'warm-up deliveries');
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const worker = collect.worker.child.pid;
      process.kill(worker, 'SIGSTOP');
      let posted = 0;
      try {
        const load = await autocannon({ url: `${base}/api/v1/submissions`, method: 'POST', headers, connections: 10, amount: COUNT, requests: [{ setupRequest: (req) => ({ ...req, body: c.body() }) }] });
        posted = load.statusCodeStats?.['201']?.count ?? 0;
        if (load.errors || posted !== COUNT) throw new Error(`unexpected answers: ${JSON.stringify(load.statusCodeStats)} errors ${load.errors}`);
      } catch (err) {
        process.kill(worker, 'SIGCONT');
        throw err;
      }
      const before = receiver.arrivals.size;
      await db.query('SELECT pg_stat_statements_reset()');
      const at = { worker: cpuOf(worker), threads: threadCpu(worker), pg: postgresCpu(postmaster), me: cpuOf(process.pid), t: performance.now() };
      process.kill(worker, 'SIGCONT');
      await until(() => receiver.arrivals.size >= before + posted, 300_000, `${posted} deliveries`);
      const seconds = (performance.now() - at.t) / 1000;
      const threads = threadCpu(worker);
      const statements = (await db.query(
        `SELECT calls::int AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%'`,
      )).rows.reduce((n, s) => n + s.calls, 0);
      const per = (a, b) => (b - a) / posted;
      const round = {
        rate: posted / seconds, worker: per(at.worker, cpuOf(worker)), main: per(at.threads.main, threads.main), v8: per(at.threads.v8, threads.v8),
        pg: per(at.pg, postgresCpu(postmaster)), receiver: per(at.me, cpuOf(process.pid)), statements: statements / posted,
      };
      rounds.push(round);
      console.log(`${name}, round ${r + 1}: ${posted} delivered in ${seconds.toFixed(2)} s (${Math.round(round.rate)}/s); CPU µs per delivery: worker ${Math.round(round.worker)} (main thread ${Math.round(round.main)}, V8 threads ${Math.round(round.v8)}), PostgreSQL ${Math.round(round.pg)}, receiver ${Math.round(round.receiver)}; SQL statements per delivery ${round.statements.toFixed(2)}`);
    }
    // The first round warms the worker's code: medians of the others (of all with a single round).
    const kept = rounds.length > 1 ? rounds.slice(1) : rounds;
    const m = (key) => median(kept.map((x) => x[key]));
    report(`deliveries per second draining ${name} submissions`, m('rate'), { digits: 0 });
    report(`CPU per ${name} delivery: worker`, m('worker'), { unit: 'µs', digits: 0 });
    report(`CPU per ${name} delivery: PostgreSQL`, m('pg'), { unit: 'µs', digits: 0 });
    report(`CPU per ${name} delivery: receiver`, m('receiver'), { unit: 'µs', digits: 0 });
  }
} finally {
  await db?.end().catch(() => undefined);
  await collect?.stop();
  await redis.stop();
  await pgServer.stop();
  await receiver.close();
}
