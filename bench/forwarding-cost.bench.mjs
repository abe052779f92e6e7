// What one forwarded submission costs, and who pays (profiled before changing delivery):
// BENCH_SECONDS of JSON intake load on a form without a service, then the same load on a form
// with one generic_json service towards a local receiver, waiting for every delivery. For each
// phase, per submission: CPU µs of the API, the worker, redis-server, the PostgreSQL server
// (this bench's own server and its backends) and the load generator (utime + stime from /proc),
// Redis commands (INFO commandstats) and SQL statements (pg_stat_statements). The difference
// of the two phases is what forwarding costs. Figures for reading (no goal): on the 2-core
// machine the sum is what caps the delivered rate of forwarding.bench.mjs.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startRedis } from '../libs/testing/dist/index.js';
import {
  addJsonService, cpuOf, createForm, must, postgresCpu, postmasterPidOf, profiled, report, SMALL_FORM_FIELDS, smallSubmission, startCollect,
  startPostgresWithStatements, startReceiver, until, userToken, writeProfileWindows,
} from './bench-helpers.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const require = createRequire(fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)));
const pg = require('pg');
const { Redis } = require('ioredis');

const receiver = await startReceiver();
const { arrivals } = receiver;
const pgServer = await startPostgresWithStatements(pg);
const redis = await startRedis();
let collect;
let db;
let rc;
try {
  collect = await startCollect({ pg: pgServer, redis, database: 'bench_collect_forwarding_cost', worker: true });
  const base = collect.url;
  db = new pg.Client({ connectionString: collect.databaseUrl });
  await db.connect();
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  // Planning time too: a statement sent as text (no prepared statement) is planned on every call.
  const admin = new pg.Client({ connectionString: pgServer.adminUrl });
  await admin.connect();
  await admin.query('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
  await admin.query('SELECT pg_reload_conf()');
  await admin.end();
  rc = new Redis(redis.url);
  const redisPid = Number(/process_id:(\d+)/.exec(await rc.info('server'))[1]);
  const postmaster = await postmasterPidOf(pg, pgServer.adminUrl);
  const pids = { API: collect.api.child.pid, worker: collect.worker.child.pid, Redis: redisPid };

  const token = await userToken(base);
  const forwarded = await createForm(base, token, { id_string: 'bench', title: 'Bench', fields: SMALL_FORM_FIELDS });
  await createForm(base, token, { id_string: 'bench_plain', title: 'Bench, no service', fields: SMALL_FORM_FIELDS });
  await addJsonService(base, token, forwarded.formid, receiver.url);
  const headers = { authorization: token, 'content-type': 'application/json' };
  const post = (idString) => fetch(`${base}/api/v1/submissions`, { method: 'POST', headers, body: smallSubmission(idString) });
  for (let i = 0; i < 100; i++) await must(post('bench_plain'), 201); // warm-up
  for (let i = 0; i < 100; i++) await must(post('bench'), 201);
  await until(() => arrivals.size >= 100, 30_000, 'warm-up deliveries');

  const redisCommands = async () => {
    const counts = {};
    for (const m of (await rc.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts[m[1]] = Number(m[2]);
    return counts;
  };
  const statements = async () => (await db.query(
    `SELECT query, calls::int, total_exec_time::float8 AS ms, total_plan_time::float8 AS plan, wal_bytes::float8 AS wal FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%'`,
  )).rows;

  // Per table: scans and row versions written (a plan that reads a whole table shows as seq_tup_read).
  const tableCounts = async () => Object.fromEntries((await db.query(
    `SELECT relname, seq_scan::int8 AS seq, seq_tup_read::int8 AS seq_rows, coalesce(idx_scan, 0)::int8 AS idx, n_tup_ins::int8 AS ins, n_tup_upd::int8 AS upd, n_tup_hot_upd::int8 AS hot
     FROM pg_stat_user_tables WHERE relname IN ('submissions', 'rest_deliveries', 'rest_delivery_attempts', 'rest_services')`,
  )).rows.map((r) => [r.relname, r]));
  const phases = {};
  for (const [phase, idString] of [['intake, no service', 'bench_plain'], ['forwarded', 'bench']]) {
    await db.query('SELECT pg_stat_statements_reset()');
    const redisBefore = await redisCommands();
    const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuOf(pid)]));
    const pgBefore = postgresCpu(postmaster);
    const pgKindsBefore = postgresCpuByKind(postmaster);
    await db.query('SELECT pg_stat_force_next_flush()');
    const tablesBefore = await tableCounts();
    const loadBefore = process.cpuUsage();
    const arrivedBefore = arrivals.size;
    const n = await profiled(phase === 'forwarded' ? 'forwarded' : 'intake', async () => {
      const load = await autocannon({ url: `${base}/api/v1/submissions`, method: 'POST', headers, connections: CONNECTIONS, duration: DURATION, requests: [{ setupRequest: (req) => ({ ...req, body: smallSubmission(idString) }) }] });
      const ok = load.statusCodeStats?.['201']?.count ?? 0;
      if (load.errors || ok !== load.requests.total) throw new Error(`unexpected answers: ${JSON.stringify(load.statusCodeStats)} errors ${load.errors}`);
      if (phase === 'forwarded') await until(() => arrivals.size >= arrivedBefore + ok, 300_000, `${ok} deliveries`);
      return ok;
    });
    const load = process.cpuUsage(loadBefore);
    const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (cpuOf(pid) - cpuBefore[k]) / n]));
    cpu.PostgreSQL = (postgresCpu(postmaster) - pgBefore) / n;
    cpu['load generator'] = (load.user + load.system) / n;
    const pgKindsAfter = postgresCpuByKind(postmaster);
    const pgKinds = Object.entries(pgKindsAfter).map(([k, v]) => [k, (v - (pgKindsBefore[k] ?? 0)) / n]).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
    const redisAfter = await redisCommands();
    await new Promise((r) => setTimeout(r, 1100)); // backends flush their table counters at most once a second
    const tablesAfter = await tableCounts();
    const byCommand = Object.entries(redisAfter).map(([c, calls]) => [c, (calls - (redisBefore[c] ?? 0)) / n]).filter(([, x]) => x > 0).sort((a, b) => b[1] - a[1]);
    const sql = (await statements()).sort((a, b) => b.calls - a.calls);
    phases[phase] = { n, cpu, redis: byCommand.reduce((s, [, x]) => s + x, 0), sql: sql.reduce((s, r) => s + r.calls, 0) / n };
    console.log(`${phase}: ${n} submissions${phase === 'forwarded' ? ', all delivered' : ''}; CPU µs per submission: ${Object.entries(cpu).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}`);
    console.log(`  PostgreSQL CPU µs per submission by process kind: ${pgKinds.map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}`);
    for (const [t, a] of Object.entries(tablesAfter)) {
      const b = tablesBefore[t];
      const per = (k) => ((Number(a[k]) - Number(b?.[k] ?? 0)) / n).toFixed(2);
      console.log(`  ${t} per submission: seq scans ${per('seq')} (rows read ${per('seq_rows')}), index scans ${per('idx')}, inserted ${per('ins')}, updated ${per('upd')} (HOT ${per('hot')})`);
    }
    console.log(`  Redis commands per submission ${phases[phase].redis.toFixed(1)}: ${byCommand.map(([c, x]) => `${c} ${x.toFixed(2)}`).join(', ')}`);
    console.log(`  SQL statements per submission ${phases[phase].sql.toFixed(2)} (calls, execution and planning time, WAL per submission):`);
    for (const s of sql.slice(0, 12)) console.log(`    ${(s.calls / n).toFixed(2).padStart(6)} ${Math.round((s.ms * 1000) / n).toString().padStart(5)} µs exec ${Math.round((s.plan * 1000) / n).toString().padStart(5)} µs plan ${Math.round(s.wal / n).toString().padStart(6)} B WAL  ${s.query.replace(/\s+/g, ' ').slice(0, 150)}`);
  }
  const [plain, fwd] = [phases['intake, no service'], phases.forwarded];
  for (const who of ['API', 'worker', 'Redis', 'PostgreSQL']) report(`CPU per forwarded submission: ${who}`, fwd.cpu[who], { unit: 'µs', digits: 0 });
  const total = (p) => p.cpu.API + p.cpu.worker + p.cpu.Redis + p.cpu.PostgreSQL;
  report('CPU per forwarded submission, all server processes, minus intake without a service', total(fwd) - total(plain), { unit: 'µs', digits: 0 });
  report('Redis commands per forwarded submission', fwd.redis - plain.redis, { digits: 1 });
  report('SQL statements per forwarded submission, minus intake without a service', fwd.sql - plain.sql, { digits: 2 });
  writeProfileWindows();
} finally {
  rc?.disconnect();
  await db?.end().catch(() => {});
  await collect?.stop();
  await redis.stop();
  await pgServer.stop();
  await receiver.close();
}

/**
 * The server's CPU by process kind (the process title: client backends, autovacuum workers,
 * the WAL writer, io workers, ...): whether a forwarded submission's PostgreSQL time is spent in
 * its statements or in the work they leave behind. Ended processes (autovacuum workers, most
 * often) count in the postmaster's reaped children as "ended".
 */
function postgresCpuByKind(postmasterPid) {
  const kinds = {};
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      if (Number(entry) === postmasterPid) {
        kinds.postmaster = (kinds.postmaster ?? 0) + cpuOf(entry);
        kinds.ended = (kinds.ended ?? 0) + cpuOf(entry, true) - cpuOf(entry);
        continue;
      }
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== postmasterPid) continue;
      const kind = /\(\d+\)/.test(title) ? 'client backends' : title.replace(/^postgres:\s*/, '').replace(/^(autovacuum worker|io worker|parallel worker)\b.*$/, '$1');
      kinds[kind] = (kinds[kind] ?? 0) + cpuOf(entry);
    } catch { /* gone */ }
  }
  return kinds;
}
