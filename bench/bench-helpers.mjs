// Small pieces every benchmark needs. Rounds are interleaved and the median of each case is
// used, because the machine is shared and load comes and goes.
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { machineLine } from './machine.mjs';
import { mediaParent } from './media-volume.mjs';
import { freePort, startPostgres, startServiceProcess } from '../libs/testing/dist/index.js';

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The `p`th percentile (0..100) of numbers, nearest rank; NaN for none. */
export function percentile(xs, p) {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** This script's bench name: `submissions` for bench/submissions.bench.mjs. */
export const BENCH_NAME = basename(process.argv[1] ?? 'bench').replace(/\.bench\.mjs$/, '');

// Every bench prints the machine before its figures (docs/benchmarks.md, "How to run").
if ((process.argv[1] ?? '').endsWith('.bench.mjs')) console.log(machineLine());

/**
 * The log level of every service a bench starts: the services' own default (`info`, a line per
 * request, as the images and the charts run them) unless BENCH_LOG_LEVEL names another, to compare.
 */
export function logLevelEnv() {
  return process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {};
}

/** Characters of a service's output a bench keeps (for a failure message): a line per request adds up. */
export const SERVICE_OUTPUT_KEPT = 256 * 1024;

/**
 * The GC pauses an event-loop probe read (bench/event-loop-probe.mjs), by kind: count, total and
 * longest; with `over10`, how many took 10 ms or more.
 */
export function gcPausesText(gc, { over10 = false } = {}) {
  return Object.entries(gc ?? {}).map(([kind, g]) => `${kind} ${g.count} (${g.ms.toFixed(0)} ms, max ${g.max.toFixed(1)} ms${over10 ? `, ${g.over10} of 10 ms or more` : ''})`).join('; ') || 'none';
}

/**
 * One result line, the form run.mjs collects into its summary table:
 * `<label>: <value>[ unit] (goal <op> <target>)`, or `(no goal set)` for a figure printed for
 * reading only. `goal` is e.g. '>= 0.5' or '<= 50'.
 */
export function report(label, value, { goal, unit = '', digits = 2 } = {}) {
  const shown = Number.isFinite(value) ? value.toFixed(digits) : String(value);
  console.log(`${label}: ${shown}${unit ? ` ${unit}` : ''} ${goal ? `(goal ${goal})` : '(no goal set)'}`);
}

/** Mean requests/s of one autocannon run; any answer other than `expect` fails the benchmark. */
export async function requestsPerSecond({ url, method = 'GET', headers, setupRequest, expect = 200 }, seconds, connections) {
  const result = await autocannon({ url, method, headers, connections, duration: seconds, ...(setupRequest ? { requests: [{ setupRequest }] } : {}) });
  const unexpected = result.statusCodeStats
    ? Object.entries(result.statusCodeStats).filter(([code]) => Number(code) !== expect).reduce((n, [, s]) => n + s.count, 0)
    : result.non2xx;
  const bad = result.errors + unexpected;
  if (bad > 0) throw new Error(`${method} ${url}: ${bad} unexpected answers of ${result.requests.total} (${JSON.stringify(result.statusCodeStats)})`);
  return result.requests.average;
}

/** The fetch Response when its status is `status`; otherwise the benchmark stops with the body. */
export async function must(promise, status) {
  const res = await promise;
  if (res.status !== status) throw new Error(`${res.url}: expected ${status}, got ${res.status} ${await res.text()}`);
  return res;
}

/** Polls `check` every 20 ms until it is true; throws after `timeoutMs`. */
export async function until(check, timeoutMs, what = 'a condition') {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------
// Built services as processes, with the bench's instruments.

export const COLLECT_MAIN = fileURLToPath(new URL('../apps/collect-api/dist/main.js', import.meta.url));
export const COLLECT_WORKER = fileURLToPath(new URL('../apps/collect-api/dist/worker.js', import.meta.url));
export const CAS_MAIN = fileURLToPath(new URL('../apps/cas/dist/main.js', import.meta.url));
export const CAS_DEV_SEED = fileURLToPath(new URL('../apps/cas/seed/dev-seed.json', import.meta.url));
const PROBE = new URL('./event-loop-probe.mjs', import.meta.url).href;

/** BENCH_CPU_PROF=<dir>: every service a bench starts runs under --cpu-prof into that folder. */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : null;

/**
 * Starts a built service entry (libs/testing startServiceProcess) named `role` ('api',
 * 'worker', 'cas'). `probe: true` preloads bench/event-loop-probe.mjs into it; `probe.read()`
 * then answers that process's own event-loop delay since the previous read. Under
 * BENCH_CPU_PROF the process writes `<dir>/<bench>.<role>.cpuprofile` when it stops.
 */
export async function startService(role, entry, env, port, { probe = false, timeoutMs = 60_000 } = {}) {
  // As the images run them: the V8 options their NODE_OPTIONS sets and their MALLOC_ARENA_MAX (docker/*.Dockerfile).
  const nodeArgs = [...imageNodeOptions(entry === CAS_MAIN ? 'cas' : 'collect-api', role)];
  const probePort = probe ? await freePort() : null;
  if (probe) nodeArgs.push(`--import=${PROBE}`);
  if (CPU_PROF_DIR) {
    mkdirSync(CPU_PROF_DIR, { recursive: true });
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, `--cpu-prof-name=${BENCH_NAME}.${role}.cpuprofile`);
  }
  const image = imageEnv(entry === CAS_MAIN ? 'cas' : 'collect-api');
  const service = await startServiceProcess(entry, { ...image, ...logLevelEnv(), ...env, ...(probePort ? { BENCH_PROBE_PORT: String(probePort) } : {}) }, port, timeoutMs, nodeArgs, SERVICE_OUTPUT_KEPT);
  return {
    ...service,
    role,
    probe: probePort
      ? { read: async () => (await must(fetch(`http://127.0.0.1:${probePort}/event-loop`), 200)).json() }
      : null,
  };
}

/** Allocator settings of docker/<image>.Dockerfile (`ENV MALLOC_ARENA_MAX=`), as the image runs. */
export function imageEnv(image) {
  const dockerfile = readFileSync(fileURLToPath(new URL(`../docker/${image}.Dockerfile`, import.meta.url)), 'utf8');
  const arenas = /^ENV MALLOC_ARENA_MAX=(\d+)\s*$/m.exec(dockerfile)?.[1];
  return arenas ? { MALLOC_ARENA_MAX: arenas } : {};
}

/**
 * The `NODE_OPTIONS=` of docker/<image>.Dockerfile's runtime stage, as node arguments.
 * BENCH_NODE_OPTIONS_<IMAGE> (`BENCH_NODE_OPTIONS_COLLECT_API`, `BENCH_NODE_OPTIONS_CAS`)
 * replaces it, to compare V8 options in one sitting (docs/benchmarks.md); for the collect-api
 * worker process alone, BENCH_NODE_OPTIONS_WORKER replaces it in turn.
 */
export function imageNodeOptions(image, role = null) {
  const override = (role === 'worker' ? process.env.BENCH_NODE_OPTIONS_WORKER : undefined) ?? process.env[`BENCH_NODE_OPTIONS_${image.toUpperCase().replace(/-/g, '_')}`];
  if (override !== undefined) return override.split(/\s+/).filter(Boolean);
  const dockerfile = readFileSync(fileURLToPath(new URL(`../docker/${image}.Dockerfile`, import.meta.url)), 'utf8');
  const value = /NODE_OPTIONS="([^"]*)"/.exec(dockerfile)?.[1] ?? '';
  return value.split(/\s+/).filter(Boolean);
}

const windows = {};
/**
 * Runs `fn` and notes its start and end (CLOCK_MONOTONIC µs, the clock of V8's cpuprofile
 * timestamps in every process of the machine) under `name`, so bench/profile-top.mjs can show
 * the profile of that part only (`--window name`).
 */
export async function profiled(name, fn) {
  const start = Number(process.hrtime.bigint() / 1000n);
  try {
    return await fn();
  } finally {
    (windows[name] ??= []).push([start, Number(process.hrtime.bigint() / 1000n)]);
  }
}

/** Under BENCH_CPU_PROF, writes the windows beside the profiles and says how to read them. */
export function writeProfileWindows() {
  if (!CPU_PROF_DIR) return;
  const file = join(CPU_PROF_DIR, `${BENCH_NAME}.windows.json`);
  writeFileSync(file, JSON.stringify(windows, null, 1));
  console.log(`cpu profiles: ${CPU_PROF_DIR}/${BENCH_NAME}.<role>.cpuprofile (written when the services stop); windows: ${Object.keys(windows).join(', ')}`);
  console.log(`  read one with: node bench/profile-top.mjs ${CPU_PROF_DIR}/${BENCH_NAME}.api.cpuprofile --window ${Object.keys(windows)[0] ?? '<name>'}`);
}

const TICK = 100; // USER_HZ: /proc/<pid>/stat counts clock ticks of 10 ms

/** utime + stime of a process in µs; with `reaped`, plus cutime + cstime (its children that ended). */
export function cpuOf(pid, reaped = false) {
  try {
    return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), reaped);
  } catch {
    return 0; // the process ended in between
  }
}

/** CPU µs in a /proc stat line (utime + stime, and the reaped children's with `reaped`). */
function cpuOfStat(stat, reaped = false) {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks * 1e6) / TICK;
}

/**
 * CPU µs of a process's threads by kind (/proc/<pid>/task/<tid>/stat, named by Node 24): main, v8
 * (V8's worker threads: the garbage collector's concurrent marking and sweeping), pool (libuv's
 * thread pool: file-system calls), other (docs/benchmarks.md, "cpu-per-request").
 */
export function threadCpu(pid) {
  const sum = { main: 0, v8: 0, pool: 0, other: 0 };
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch { /* ended */ }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      sum[Number(tid) === pid ? 'main' : name.startsWith('V8') ? 'v8' : name.startsWith('libuv') ? 'pool' : 'other'] += cpuOfStat(stat);
    } catch { /* the thread ended */ }
  }
  return sum;
}

/**
 * CPU µs of every process whose command is `postgres` (the embedded server and its backends);
 * with `postmasterPid`, only that server, its children and the children that ended (other
 * servers on a shared machine left out).
 */
export function postgresCpu(postmasterPid = null) {
  let sum = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      if (postmasterPid !== null && Number(entry) !== postmasterPid && parentOf(entry) !== postmasterPid) continue;
      // A backend that ended during the load moved its CPU into the postmaster's cutime/cstime.
      sum += cpuOf(entry, Number(entry) === postmasterPid);
    } catch { /* gone */ }
  }
  return sum;
}

function parentOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The process id of the PostgreSQL server behind `adminUrl` (a superuser's), from its postmaster.pid. */
export async function postmasterPidOf(pg, adminUrl) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SHOW data_directory');
    return Number(readFileSync(join(rows[0].data_directory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } finally {
    await client.end();
  }
}

/**
 * An embedded PostgreSQL (fsync off) with pg_stat_statements loaded, for counting statements:
 * shared_preload_libraries is read at server start only, so it starts once, sets it and starts
 * again on the same data. `stop` also removes the data folder. `pg` is the `pg` module.
 */
export async function startPostgresWithStatements(pg) {
  const dataParent = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  chmodSync(dataParent, 0o755); // the server runs as the `postgres` OS user when we are root
  const dataDir = join(dataParent, 'pg');
  const first = await startPostgres({ fast: true, dataDir });
  const admin = new pg.Client({ connectionString: first.adminUrl });
  await admin.connect();
  await admin.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
  await admin.end();
  await first.stop();
  const server = await startPostgres({ fast: true, dataDir, port: first.port });
  return {
    ...server,
    async stop() {
      await server.stop();
      rmSync(dataParent, { recursive: true, force: true });
    },
  };
}

/** Resident set size of a process in bytes (Linux /proc/<pid>/status VmRSS), and its peak (VmHWM). */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/**
 * Runs `work` while sampling `pid`'s resident set every 20 ms, after `settleMs` for the process
 * to settle; answers work's value, the RSS before and the growth to the peak in MB, and the
 * seconds `work` took. The memory goals of the streaming benches read this.
 */
export async function rssGrowthDuring(pid, work, { settleMs = 0 } = {}) {
  if (settleMs) await sleep(settleMs);
  const before = rssOf(pid).rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid).rss)), 20);
  const started = process.hrtime.bigint();
  try {
    const value = await work();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    peak = Math.max(peak, rssOf(pid).rss);
    return { value, beforeMb: before / 1048576, growthMb: (peak - before) / 1048576, seconds };
  } finally {
    clearInterval(sampler);
  }
}

/** Huge pages in a process's resident memory (/proc/<pid>/smaps_rollup): anonymous THP and file pages mapped by PMD. */
export function hugePagesOf(pid) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) * 1024;
  return { anon: kb('AnonHugePages'), file: kb('FilePmdMapped') };
}

/** Environment of a collect-api process (API or worker) for benches: its default log level, loopback only. */
export function collectEnv({ databaseUrl, redisUrl, mediaRoot, apiPort, ...extra }) {
  return {
    NODE_ENV: 'test', COLLECT_PORT: String(apiPort), COLLECT_HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_PREFIX: 'bench', MEDIA_ROOT: mediaRoot,
    FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', FORWARD_RELAY_INTERVAL_MS: '200',
    // The benches measure the forwarder, not the pacing of destinations a user names.
    FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE: '0',
    ...extra,
  };
}

/**
 * The built collect-api (and with `worker: true` its delivery worker) as processes on the given
 * PostgreSQL handle and Redis, in a database of their own and a temporary media folder (and
 * upload spool) under bench/media-volume.mjs's mediaParent().
 */
export async function startCollect({ pg, redis, database, worker = false, probe = false, env = {} }) {
  const databaseUrl = await pg.createDatabase(database);
  // Media and upload spool on one file system (renames), journalled when it can be had (bench/media-volume.mjs).
  const mediaRoot = mkdtempSync(join(mediaParent(), 'bench-media-'));
  const uploadDir = `${mediaRoot}-uploads`;
  const apiPort = await freePort();
  const base = collectEnv({ databaseUrl, redisUrl: redis.url, mediaRoot, apiPort, UPLOAD_TMP_DIR: uploadDir, ...env });
  const started = [];
  const stop = async () => {
    for (const s of started.reverse()) await s.stop();
    rmSync(mediaRoot, { recursive: true, force: true });
    rmSync(uploadDir, { recursive: true, force: true });
  };
  try {
    const api = await startService('api', COLLECT_MAIN, base, apiPort, { probe });
    started.push(api);
    let workerProcess = null;
    if (worker) {
      const workerPort = await freePort();
      workerProcess = await startService('worker', COLLECT_WORKER, { ...base, WORKER_PORT: String(workerPort) }, workerPort, { probe });
      started.push(workerProcess);
    }
    return { api, worker: workerProcess, url: api.url, databaseUrl, mediaRoot, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// API fixtures: a user with a Token, forms, submissions.

/** Registers a user and answers `Token <api_token>` for it. */
export async function userToken(base, username = 'bench') {
  const user = { username, password: 'bench-password', email: `${username}@example.org` };
  await must(fetch(`${base}/api/v1/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(user) }), 201);
  const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const me = await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: basic } }), 200)).json();
  return `Token ${me.api_token}`;
}

/** Creates a form from a JSON definition; answers the form resource. */
export async function createForm(base, token, definition) {
  return (await must(fetch(`${base}/api/v1/forms`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(definition) }), 201)).json();
}

/** Adds a generic_json rest service on `formid` towards `url`. */
export async function addJsonService(base, token, formid, url) {
  await must(fetch(`${base}/api/v1/restservices`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify({ xform: formid, name: 'generic_json', service_url: url }) }), 201);
}

/** The small form every intake bench submits to (text, integer, geopoint, a group). */
export const SMALL_FORM_FIELDS = [
  { name: 'name', type: 'text' }, { name: 'age', type: 'integer' }, { name: 'loc', type: 'geopoint' },
  { name: 'g', type: 'group', children: [{ name: 'a', type: 'text' }, { name: 'b', type: 'decimal' }] },
];

/** A JSON submission body for the small form named `idString`, a new instance each call. */
export function smallSubmission(idString, uuid = randomUUID()) {
  return JSON.stringify({ id: idString, submission: { name: 'Jane', age: 34, loc: '-1.28 36.81 0 0', g: { a: 'x', b: 1.5 }, meta: { instanceID: `uuid:${uuid}` } } });
}

/**
 * A local receiver of rest-service deliveries (the outside world, as a real HTTP server on
 * 127.0.0.1): notes the first arrival time (performance.now) of each payload's `_uuid`.
 */
export async function startReceiver() {
  const arrivals = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      try {
        const uuid = JSON.parse(Buffer.concat(chunks).toString())._uuid;
        if (!arrivals.has(uuid)) arrivals.set(uuid, at);
      } catch { /* not a delivery of ours */ }
      res.end('ok');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, arrivals, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Calls `send(i)` for i = 0 .. count-1 at `rate` per second. Due times are fixed from the start,
 * so a late tick sends everything already due; with `maxInFlight` sends pending, a due send is
 * skipped and counted instead (a bounded client, like a fleet of devices that gives up).
 * Answers { skipped, seconds } once every send has settled; the first send that threw is rethrown.
 */
export async function paced({ rate, count, maxInFlight = Infinity, send }) {
  const t0 = performance.now();
  let inFlight = 0;
  let skipped = 0;
  const pending = [];
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    // setImmediate at least: answers are read between sends even when the sender is late.
    await (wait > 1 ? sleep(wait) : new Promise((r) => setImmediate(r)));
    if (inFlight >= maxInFlight) {
      skipped++;
      continue;
    }
    inFlight++;
    pending.push(send(i).finally(() => inFlight--));
  }
  const seconds = (performance.now() - t0) / 1000;
  const failed = (await Promise.allSettled(pending)).find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return { skipped, seconds };
}

/** POST with node:http through `agent` (keep-alive); answers the status code, or throws on error/timeout. */
export function httpPost(agent, url, headers, body, timeoutMs) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
