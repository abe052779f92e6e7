// Rest-service forwarding (issues 8, 20): submissions per second accepted AND delivered to a
// local receiver through one generic_json service (API → outbox → relay → Bull → worker
// process → HTTP), counted from the start of the load to the last delivery, ÷ JSON intake per
// second on a form with no service, measured in the same run with the same worker running
// (goal >= 0.75: forwarding must not cost much more than intake itself). Rounds are
// interleaved, medians used. Then p50/p99 submit-to-delivered latency of paced submissions at
// half the delivered rate (goal p99 <= 50 ms), with what a tail is made of: the latency split
// at the API's answer (submit → 201, 201 → delivered), the GC pauses of the API and the worker
// over that phase (bench/event-loop-probe.mjs, preloaded into both) and any autovacuum or
// autoanalyze of the delivery tables that ran meanwhile (docs/benchmarks.md, "Forwarding (issue
// 20, session 8)"). A bare PostgreSQL INSERT of rows of the same size is printed for reference. The built API and worker run as their own processes on
// embedded PostgreSQL + redis-server; the receiver listens on 127.0.0.1.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import {
  addJsonService, createForm, median, must, paced, percentile, profiled, report, requestsPerSecond, SMALL_FORM_FIELDS, smallSubmission, startCollect,
  startReceiver, until, userToken, writeProfileWindows,
} from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const pg = createRequire(fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)))('pg');

const receiver = await startReceiver();
const { arrivals } = receiver;
const pgServer = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
try {
  collect = await startCollect({ pg: pgServer, redis, database: 'bench_collect_forwarding', worker: true, probe: true });
  const base = collect.url;
  const token = await userToken(base);
  const forwarded = await createForm(base, token, { id_string: 'bench', title: 'Bench', fields: SMALL_FORM_FIELDS });
  await createForm(base, token, { id_string: 'bench_plain', title: 'Bench, no service', fields: SMALL_FORM_FIELDS });
  await addJsonService(base, token, forwarded.formid, receiver.url);
  const headers = { authorization: token, 'content-type': 'application/json' };
  const post = (idString, uuid) => fetch(`${base}/api/v1/submissions`, { method: 'POST', headers, body: smallSubmission(idString, uuid) });
  for (let i = 0; i < 50; i++) await must(post('bench_plain'), 201); // warm-up
  for (let i = 0; i < 50; i++) await must(post('bench'), 201);
  await until(() => arrivals.size >= 50, 30_000, 'warm-up deliveries');

  // Reference: bare INSERTs of a row the size of a stored submission, same connection count.
  const sample = await (await must(fetch(`${base}/api/v1/data/${forwarded.formid}?page_size=1`, { headers: { authorization: token } }), 200)).json();
  const rowJson = JSON.stringify(sample[0]);
  const pool = new pg.Pool({ connectionString: collect.databaseUrl, max: CONNECTIONS });
  await pool.query('CREATE TABLE bench_rows (id serial PRIMARY KEY, uuid uuid NOT NULL UNIQUE, json jsonb NOT NULL, created timestamptz NOT NULL DEFAULT now())');
  let inserted = 0;
  const insertEnd = performance.now() + DURATION * 1000;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < insertEnd) {
      await pool.query('INSERT INTO bench_rows (uuid, json) VALUES ($1, $2)', [randomUUID(), rowJson]);
      inserted++;
    }
  }));
  await pool.end();
  const insertRate = inserted / DURATION;

  const intakeCase = { url: `${base}/api/v1/submissions`, method: 'POST', headers, setupRequest: (req) => ({ ...req, body: smallSubmission('bench_plain') }), expect: 201 };
  const intake = [];
  const delivered = [];
  const accepted = [];
  for (let r = 0; r < ROUNDS; r++) {
    intake.push(await profiled('intake', () => requestsPerSecond(intakeCase, DURATION, CONNECTIONS)));
    // Accepted by the API and delivered by the worker, start of the load to the last arrival.
    const round = await profiled('delivered', async () => {
      const before = arrivals.size;
      const start = performance.now();
      const load = await autocannon({ url: `${base}/api/v1/submissions`, method: 'POST', headers, connections: CONNECTIONS, duration: DURATION, requests: [{ setupRequest: (req) => ({ ...req, body: smallSubmission('bench') }) }] });
      const ok = load.statusCodeStats?.['201']?.count ?? 0;
      if (load.errors || ok !== load.requests.total) throw new Error(`unexpected answers: ${JSON.stringify(load.statusCodeStats)} errors ${load.errors}`);
      await until(() => arrivals.size >= before + ok, 300_000, `${ok} deliveries`);
      const lastArrival = Math.max(...arrivals.values());
      return { accepted: ok / DURATION, delivered: ok / ((lastArrival - start) / 1000) };
    });
    delivered.push(round.delivered);
    accepted.push(round.accepted);
  }
  const [intakeRate, deliveredRate, acceptedRate] = [median(intake), median(delivered), median(accepted)];

  // Latency at half the delivered rate: paced submissions, submit → arrival at the receiver.
  const rate = Math.max(1, deliveredRate / 2);
  const count = Math.round(rate * DURATION);
  const sentAt = new Map();
  const answeredAt = new Map();
  const vacuumsBefore = await vacuumCounts(collect.databaseUrl);
  await Promise.all([collect.api.probe.read(), collect.worker.probe.read()]); // both histograms start with the phase
  await profiled('latency', () => paced({
    rate, count, send: async () => {
      const uuid = randomUUID();
      sentAt.set(uuid, performance.now());
      await must(post('bench', uuid), 201);
      answeredAt.set(uuid, performance.now());
    },
  }));
  await until(() => [...sentAt.keys()].every((u) => arrivals.has(u)), 120_000, 'the paced deliveries');
  const [apiLoop, workerLoop] = await Promise.all([collect.api.probe.read(), collect.worker.probe.read()]);
  const vacuums = diffCounts(vacuumsBefore, await vacuumCounts(collect.databaseUrl));
  const lat = [...sentAt].map(([u, t]) => arrivals.get(u) - t);
  const toAnswer = [...sentAt].map(([u, t]) => answeredAt.get(u) - t);
  const toArrival = [...sentAt].map(([u]) => arrivals.get(u) - answeredAt.get(u));

  console.log(`bare PostgreSQL INSERT (${rowJson.length}-byte jsonb rows, ${CONNECTIONS} connections): ${Math.round(insertRate)} rows/s`);
  console.log(`JSON intake, form without a service: ${Math.round(intakeRate)}/s (median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  console.log(`with one generic_json service: accepted ${Math.round(acceptedRate)}/s; accepted and delivered (start to last delivery) ${Math.round(deliveredRate)}/s (medians of ${ROUNDS})`);
  report('ratio delivered/intake-no-service', deliveredRate / intakeRate, { goal: '>= 0.75' });
  report('ratio delivered/bare-insert', deliveredRate / insertRate, { digits: 3 });
  console.log(`latency submit-to-delivered at ${Math.round(rate)}/s (${count} submissions): p50 ${percentile(lat, 50).toFixed(0)} ms, p99 ${percentile(lat, 99).toFixed(0)} ms`);
  const spread = (xs) => `p50 ${percentile(xs, 50).toFixed(0)}, p99 ${percentile(xs, 99).toFixed(0)}, max ${Math.max(...xs).toFixed(0)} ms`;
  console.log(`  split: submit -> 201 ${spread(toAnswer)}; 201 -> delivered ${spread(toArrival)}`);
  console.log(`  API: ${loopLine(apiLoop)}`);
  console.log(`  worker: ${loopLine(workerLoop)}`);
  console.log(`  autovacuum/autoanalyze runs meanwhile: ${vacuums || 'none'}`);
  report('p99 submit-to-delivered at half the delivered rate', percentile(lat, 99), { goal: '<= 50', unit: 'ms', digits: 0 });
  writeProfileWindows();
} finally {
  await collect?.stop();
  await redis.stop();
  await pgServer.stop();
  await receiver.close();
}

/** Event-loop delay and GC pauses of one service over a phase (bench/event-loop-probe.mjs). */
function loopLine(loop) {
  const gc = Object.entries(loop.gc ?? {}).map(([kind, g]) => `${kind} ${g.count} (${g.ms.toFixed(0)} ms, max ${g.max.toFixed(1)} ms)`).join('; ') || 'none';
  return `event-loop delay p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(0)} ms; GC pauses ${gc}`;
}

/** Autovacuum and autoanalyze runs so far on the tables a forwarded submission writes. */
async function vacuumCounts(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT relname, autovacuum_count::int AS vacuum, autoanalyze_count::int AS analyze FROM pg_stat_user_tables
       WHERE relname IN ('submissions', 'rest_deliveries', 'rest_delivery_attempts', 'rest_services')`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, r]));
  } finally {
    await client.end();
  }
}

function diffCounts(before, after) {
  return Object.entries(after).flatMap(([rel, a]) => [
    a.vacuum > (before[rel]?.vacuum ?? 0) ? `autovacuum ${rel}` : null,
    a.analyze > (before[rel]?.analyze ?? 0) ? `autoanalyze ${rel}` : null,
  ]).filter(Boolean).join(', ');
}
