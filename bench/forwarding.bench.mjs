// Rest-service forwarding (docs/restservices.md): submissions per second accepted AND delivered to a
// local receiver through one generic_json service (API → outbox → relay → Bull → worker
// process → HTTP), counted from the start of the load to the last delivery, ÷ JSON intake per
// second on a form with no service, measured in the same run with the same worker running
// (goal >= 0.75: forwarding must not cost much more than intake itself). Rounds are
// interleaved, medians used. Then p50/p99 submit-to-delivered latency of paced submissions at
// half the delivered rate (goal p99 <= 50 ms), with what a tail is made of: the latency split
// at the API's answer (submit → 201, 201 → delivered), the GC pauses of the API and the worker
// over that phase (bench/event-loop-probe.mjs, preloaded into both) and any autovacuum or
// autoanalyze of the delivery tables that ran meanwhile (docs/benchmarks.md,
// "forwarding"), WAL writes (pg_stat_wal, pg_stat_io) and, with BENCH_PG_SAMPLE_MS set (off by
// default: the sampling's own load lengthened the latencies it explains), what PostgreSQL's
// backends of the API and the worker were doing meanwhile: pg_stat_activity sampled every few ms
// from a worker thread (wait events, overall and within the tail's own windows), lock waits
// logged by the server (log_lock_waits), WAL syncs with track_wal_io_timing (docs/benchmarks.md,
// "forwarding"). A bare PostgreSQL INSERT of rows of the same size is printed for reference. The built API and worker run as their own processes on
// embedded PostgreSQL + redis-server; the receiver listens on 127.0.0.1.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import {
  addJsonService, createForm, gcPausesText, httpPost, median, must, paced, percentile, profiled, report, requestsPerSecond, SMALL_FORM_FIELDS, smallSubmission, startCollect,
  startReceiver, until, userToken, writeProfileWindows,
} from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const apiRequire = createRequire(fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)));
const pg = apiRequire('pg');
/**
 * pg_stat_activity sampling interval of the latency phase, with the server's wait diagnostics
 * (pgDiagnostics); 0, the default, leaves both out. A query of pg_stat_activity every 4 ms on two
 * cores tripled the phase's p50 (10-13 ms without, 25-44 ms with, four alternating pairs) and
 * doubled its p99, so the goal row is read without it; set 4 to see what a tail is made of
 * (docs/benchmarks.md, "forwarding").
 */
const SAMPLE_EVERY_MS = Number(process.env.BENCH_PG_SAMPLE_MS ?? 0);
const DIAGNOSING = SAMPLE_EVERY_MS > 0;
/** log_lock_waits logs a wait once it lasts deadlock_timeout: set this low for the latency phase. */
const LOCK_WAIT_LOG_MS = 5;

const receiver = await startReceiver();
const { arrivals } = receiver;
// The server's log, kept only while the latency phase runs (its lock-wait lines).
let serverLog = null;
// BENCH_PG_DURABLE=1: fsync and synchronous_commit on, as production runs, to see the WAL syncs at commit.
const DURABLE = process.env.BENCH_PG_DURABLE === '1';
// BENCH_PG_SETTINGS="commit_delay=1000 commit_siblings=2": server settings to compare in one sitting.
const PG_SETTINGS = Object.fromEntries((process.env.BENCH_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean).map((kv) => kv.split('=')));
const pgServer = await startPostgres({ fast: !DURABLE, settings: PG_SETTINGS, onLog: (text) => serverLog?.push(text) });
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
  // node:http with a keep-alive agent, not fetch: this process is the clock of both halves, and
  // its own pauses count as latency (docs/benchmarks.md, "forwarding").
  const agent = new http.Agent({ keepAlive: true });
  const viaFetch = process.env.BENCH_LATENCY_CLIENT === 'fetch';
  // Its sockets opened and its code warm before the clock starts, as fetch's were by the warm-up above.
  const warmBefore = arrivals.size;
  for (let i = 0; i < 10; i++) {
    await Promise.all(Array.from({ length: 10 }, async () => {
      const status = await httpPost(agent, `${base}/api/v1/submissions`, headers, smallSubmission('bench'), 60_000);
      if (status !== 201) throw new Error(`latency warm-up: expected 201, got ${status}`);
    }));
  }
  await until(() => arrivals.size >= warmBefore + 100, 60_000, 'the latency warm-up deliveries');
  const vacuumsBefore = await vacuumCounts(collect.databaseUrl);
  if (DIAGNOSING) await pgDiagnostics(collect.databaseUrl, 'on');
  const walBefore = await walCounters(collect.databaseUrl);
  if (DIAGNOSING) serverLog = [];
  const sampler = DIAGNOSING ? startSampler(collect.databaseUrl) : null;
  await sampler?.ready;
  const ownLoop = monitorEventLoopDelay({ resolution: 10 });
  ownLoop.enable();
  const ownGc = { count: 0, ms: 0, max: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) Object.assign(ownGc, { count: ownGc.count + 1, ms: ownGc.ms + e.duration, max: Math.max(ownGc.max, e.duration) });
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const phaseStart = performance.now();
  await Promise.all([collect.api.probe.read(), collect.worker.probe.read()]); // both histograms start with the phase
  await profiled('latency', () => paced({
    rate, count, send: async () => {
      const uuid = randomUUID();
      const body = smallSubmission('bench', uuid);
      sentAt.set(uuid, performance.now());
      if (viaFetch) await must(post('bench', uuid), 201);
      else {
        const status = await httpPost(agent, `${base}/api/v1/submissions`, headers, body, 60_000);
        if (status !== 201) throw new Error(`latency phase: expected 201, got ${status}`);
      }
      answeredAt.set(uuid, performance.now());
    },
  }));
  agent.destroy();
  await until(() => [...sentAt.keys()].every((u) => arrivals.has(u)), 120_000, 'the paced deliveries');
  const [apiLoop, workerLoop] = await Promise.all([collect.api.probe.read(), collect.worker.probe.read()]);
  ownLoop.disable();
  gcObserver.disconnect();
  const samples = (await sampler?.stop()) ?? [];
  const walAfter = await walCounters(collect.databaseUrl);
  const lockWaits = DIAGNOSING ? lockWaitLines(serverLog.join('')) : null;
  serverLog = null;
  if (DIAGNOSING) await pgDiagnostics(collect.databaseUrl, 'off');
  const vacuums = diffCounts(vacuumsBefore, await vacuumCounts(collect.databaseUrl));
  const lat = [...sentAt].map(([u, t]) => arrivals.get(u) - t);
  const toAnswer = [...sentAt].map(([u, t]) => answeredAt.get(u) - t);
  const toArrival = [...sentAt].map(([u]) => arrivals.get(u) - answeredAt.get(u));

  console.log(`bare PostgreSQL INSERT (${rowJson.length}-byte jsonb rows, ${CONNECTIONS} connections): ${Math.round(insertRate)} rows/s`);
  console.log(`JSON intake, form without a service: ${Math.round(intakeRate)}/s (median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  console.log(`with one generic_json service: accepted ${Math.round(acceptedRate)}/s; accepted and delivered (start to last delivery) ${Math.round(deliveredRate)}/s (medians of ${ROUNDS})`);
  report('ratio delivered/intake-no-service', deliveredRate / intakeRate, { goal: '>= 0.75' });
  report('ratio delivered/bare-insert', deliveredRate / insertRate, { digits: 3 });
  if (DURABLE) console.log('PostgreSQL with fsync and synchronous_commit on (BENCH_PG_DURABLE=1)');
  if (Object.keys(PG_SETTINGS).length) console.log(`PostgreSQL settings (BENCH_PG_SETTINGS): ${JSON.stringify(PG_SETTINGS)}`);
  console.log(`latency submit-to-delivered at ${Math.round(rate)}/s (${count} submissions): p50 ${percentile(lat, 50).toFixed(0)} ms, p99 ${percentile(lat, 99).toFixed(0)} ms`);
  const spread = (xs) => `p50 ${percentile(xs, 50).toFixed(0)}, p99 ${percentile(xs, 99).toFixed(0)}, max ${Math.max(...xs).toFixed(0)} ms`;
  console.log(`  split: submit -> 201 ${spread(toAnswer)}; 201 -> delivered ${spread(toArrival)}`);
  console.log(`  API: ${loopLine(apiLoop)}`);
  console.log(`  worker: ${loopLine(workerLoop)}`);
  console.log(`  autovacuum/autoanalyze runs meanwhile: ${vacuums || 'none'}`);
  console.log(`  load generator and receiver (this process): event-loop delay p99 ${Math.max(0, ownLoop.percentile(99) / 1e6 - 10).toFixed(1)} ms, max ${Math.max(0, ownLoop.max / 1e6 - 10).toFixed(0)} ms; GC pauses ${ownGc.count} (${ownGc.ms.toFixed(0)} ms, max ${ownGc.max.toFixed(1)} ms)`);
  // When in the phase the slowest 1 % were sent: spread out (the machine, the pauses) or together (one event).
  const latCut = percentile(lat, 99);
  const slowAt = [...sentAt].filter(([u, t]) => arrivals.get(u) - t >= latCut).map(([, t]) => ((t - phaseStart) / 1000).toFixed(2));
  console.log(`  the slowest 1 % (>= ${latCut.toFixed(0)} ms) were sent at (s into the phase): ${slowAt.join(' ')}`);
  if (DIAGNOSING) {
    // What the backends (attributed by their sockets) were doing overall and within the tail's own windows.
    const owners = socketOwners({ API: collect.api.child.pid, worker: collect.worker.child.pid });
    const abs = (t) => performance.timeOrigin + t;
    const tailOf = (xs, from, to) => {
      const cut = percentile(xs.map(([, d]) => d), 99);
      return xs.filter(([, d]) => d >= cut).map(([u]) => [abs(from(u)), abs(to(u))]);
    };
    const answerTail = tailOf([...sentAt].map(([u, t]) => [u, answeredAt.get(u) - t]), (u) => sentAt.get(u), (u) => answeredAt.get(u));
    const arrivalTail = tailOf([...sentAt].map(([u]) => [u, arrivals.get(u) - answeredAt.get(u)]), (u) => answeredAt.get(u), (u) => arrivals.get(u));
    console.log(`  PostgreSQL backends, mean count per state over the phase (${samples.length} samples of pg_stat_activity, one per ${SAMPLE_EVERY_MS} ms or slower):`);
    for (const line of backendLines(samples, owners, null)) console.log(`    ${line}`);
    console.log(`  the same within the submit -> 201 windows of the slowest 1 % (${answerTail.length}):`);
    for (const line of backendLines(samples, owners, answerTail)) console.log(`    ${line}`);
    console.log(`  the same within the 201 -> delivered windows of the slowest 1 % (${arrivalTail.length}):`);
    for (const line of backendLines(samples, owners, arrivalTail)) console.log(`    ${line}`);
    console.log(`  lock waits over deadlock_timeout (${LOCK_WAIT_LOG_MS} ms), from log_lock_waits: ${lockWaits}`);
    console.log(`  (pg_stat_activity sampled every ${SAMPLE_EVERY_MS} ms during the phase: its own load is in these latencies)`);
  } else {
    console.log('  PostgreSQL wait sampling off (BENCH_PG_SAMPLE_MS=4 samples pg_stat_activity and logs lock waits, at a cost to these latencies)');
  }
  console.log(`  WAL: ${walLine(walBefore, walAfter)}; checkpoints meanwhile ${walAfter.checkpoints - walBefore.checkpoints}`);
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
  return `event-loop delay p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(0)} ms; GC pauses ${gcPausesText(loop.gc)}`;
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


/** Turns the server's wait and I/O timing on for the latency phase and off after it (superuser; a reload suffices for each). */
async function pgDiagnostics(databaseUrl, on) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const settings = { track_io_timing: 'on', track_wal_io_timing: 'on', log_lock_waits: 'on', deadlock_timeout: `'${LOCK_WAIT_LOG_MS}ms'` };
    for (const [name, value] of Object.entries(settings)) await client.query(on === 'on' ? `ALTER SYSTEM SET ${name} = ${value}` : `ALTER SYSTEM RESET ${name}`);
    await client.query('SELECT pg_reload_conf()');
    if (on === 'on') await client.query('SELECT pg_stat_reset_shared($1)', ['io']).catch(() => undefined);
  } finally {
    await client.end();
  }
}

/** WAL volume (pg_stat_wal) and WAL writes and syncs with their times (PostgreSQL 18: pg_stat_io, object 'wal'). */
async function walCounters(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const [wal] = (await client.query('SELECT wal_records::bigint AS records, wal_bytes::bigint AS bytes, wal_buffers_full::bigint AS buffers_full FROM pg_stat_wal')).rows;
    const io = (await client.query(
      `SELECT backend_type, sum(writes)::float8 AS writes, sum(write_time)::float8 AS write_time, sum(fsyncs)::float8 AS fsyncs, sum(fsync_time)::float8 AS fsync_time
       FROM pg_stat_io WHERE object = 'wal' GROUP BY backend_type`,
    )).rows;
    const [{ checkpoints }] = (await client.query('SELECT (num_timed + num_requested)::int AS checkpoints FROM pg_stat_checkpointer')).rows;
    return { checkpoints, wal: Object.fromEntries(Object.entries(wal).map(([k, v]) => [k, Number(v)])), io: Object.fromEntries(io.map((r) => [r.backend_type, r])) };
  } finally {
    await client.end();
  }
}

function walLine(before, after) {
  const d = (k) => after.wal[k] - before.wal[k];
  const io = Object.entries(after.io).map(([type, a]) => {
    const b = before.io[type] ?? {};
    const dk = (k) => (a[k] ?? 0) - (b[k] ?? 0);
    return dk('writes') || dk('fsyncs') ? `${type} ${dk('writes')} writes (${dk('write_time').toFixed(1)} ms), ${dk('fsyncs')} syncs (${dk('fsync_time').toFixed(1)} ms)` : null;
  }).filter(Boolean);
  return `${d('records')} records, ${(d('bytes') / 1024).toFixed(0)} kB, buffers full ${d('buffers_full')}; ${io.join('; ') || 'no WAL writes counted'}`;
}

/** The lock waits the server logged (log_lock_waits: "still waiting for <mode> on <object> after <n> ms"), by object. */
function lockWaitLines(log) {
  const waits = [...log.matchAll(/still waiting for (\w+) on (.+?) after ([\d.]+) ms/g)];
  if (!waits.length) return 'none';
  const by = {};
  for (const [, mode, what, ms] of waits) {
    const key = `${mode} on ${what.replace(/\d+/g, 'N')}`;
    by[key] = (by[key] ?? 0) + 1;
  }
  const acquired = [...log.matchAll(/acquired (\w+) on .+? after ([\d.]+) ms/g)].map((m) => Number(m[2]));
  return `${waits.length} (${Object.entries(by).map(([k, n]) => `${n} x ${k}`).join('; ')})${acquired.length ? `, longest acquired after ${Math.max(...acquired).toFixed(0)} ms` : ''}`;
}

/**
 * pg_stat_activity of this database every SAMPLE_EVERY_MS, from a worker thread with a connection
 * of its own, so the sampling neither waits on nor delays this process's load and receiver.
 */
function startSampler(databaseUrl) {
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    const pg = require(workerData.pgPath);
    const now = () => performance.timeOrigin + performance.now();
    (async () => {
      const client = new pg.Client({ connectionString: workerData.url, application_name: 'bench-sampler' });
      await client.connect();
      let stop = false;
      parentPort.on('message', () => (stop = true));
      parentPort.postMessage('ready');
      const samples = [];
      const text = "SELECT client_port, state, coalesce(wait_event_type || ':' || wait_event, '') AS wait, left(regexp_replace(query, '\\\\s+', ' ', 'g'), 40) AS q FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = current_database() AND pid <> pg_backend_pid()";
      while (!stop) {
        const t = now();
        const { rows } = await client.query({ text, rowMode: 'array' });
        samples.push([t, rows]);
        const wait = t + workerData.everyMs - now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      await client.end();
      parentPort.postMessage(samples);
    })().catch((err) => parentPort.postMessage({ error: String(err) }));
  `, { eval: true, workerData: { url: databaseUrl, pgPath: apiRequire.resolve('pg'), everyMs: SAMPLE_EVERY_MS } });
  const messages = [];
  let wake = null;
  worker.on('message', (m) => { messages.push(m); wake?.(); });
  const next = async () => {
    while (!messages.length) await new Promise((r) => (wake = r));
    const m = messages.shift();
    if (m?.error) throw new Error(`pg_stat_activity sampler: ${m.error}`);
    return m;
  };
  return {
    ready: next(),
    async stop() {
      worker.postMessage('stop');
      const samples = await next();
      await worker.terminate();
      return samples;
    },
  };
}

/** Local TCP port -> role, for the sockets the given processes hold (/proc): which process a backend serves (its client_port). */
function socketOwners(pids) {
  const inodes = new Map();
  for (const [role, pid] of Object.entries(pids)) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.set(m[1], role);
      } catch { /* closed meanwhile */ }
    }
  }
  const ports = new Map();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      const role = inodes.get(c[9]);
      if (role) ports.set(parseInt(c[1].split(':')[1], 16), role);
    }
  }
  return ports;
}

/**
 * Per process (API, worker), the mean number of its backends in each state over the samples
 * (inside `windows` only, when given): "CPU" is active with no wait event, "in xact, client" is
 * idle in transaction (waiting for the process's next statement), a wait event is named as
 * PostgreSQL names it; "busy max" is the most backends of that process not idle in one sample
 * (its pool size is the ceiling: at the ceiling its requests wait for a connection). Also which
 * statements the waiting backends were running.
 */
function backendLines(samples, owners, windows) {
  if (!samples.length) return ['not sampled (BENCH_PG_SAMPLE_MS=0)'];
  const inWindow = windows
    ? (t) => windows.some(([a, b]) => t >= a && t <= b)
    : () => true;
  const chosen = samples.filter(([t]) => inWindow(t));
  if (!chosen.length) return ['no sample fell in these windows'];
  const roles = {};
  for (const [, rows] of chosen) {
    const busyNow = {};
    for (const [port, state, wait, q] of rows) {
      const role = owners.get(port) ?? 'other';
      const r = (roles[role] ??= { states: {}, busyMax: 0, backends: new Set(), waits: {} });
      r.backends.add(port);
      const kind = state === 'active' ? (wait || 'CPU') : state === 'idle in transaction' ? 'in xact, client' : state ?? 'unknown';
      r.states[kind] = (r.states[kind] ?? 0) + 1;
      if (state !== 'idle') busyNow[role] = (busyNow[role] ?? 0) + 1;
      if (state === 'active' && wait && !wait.startsWith('Client:')) {
        const key = `${wait} in "${q}"`;
        r.waits[key] = (r.waits[key] ?? 0) + 1;
      }
    }
    for (const [role, n] of Object.entries(busyNow)) roles[role].busyMax = Math.max(roles[role].busyMax, n);
  }
  const n = chosen.length;
  return Object.entries(roles).sort().flatMap(([role, r]) => {
    const states = Object.entries(r.states).sort((a, b) => b[1] - a[1]).map(([k, c]) => `${k} ${(c / n).toFixed(2)}`).join(', ');
    const waits = Object.entries(r.waits).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, c]) => `${k} ${(c / n).toFixed(3)}`);
    return [`${role} (${r.backends.size} backends, busy max ${r.busyMax}, ${n} samples): ${states}`, ...waits.map((w) => `  waiting: ${w}`)];
  });
}
