// CPU time per request on the intake and read paths, to profile before changing: where a
// request's cost lands on the 2-core machine. The throughput ratios of submissions.bench.mjs
// say how fast; this says who pays: the API process, this run's PostgreSQL server (its
// postmaster and children: backends, WAL writer, checkpointer, autovacuum) and the load
// generator (this process), as utime + stime from /proc over BENCH_SECONDS of autocannon load
// per case, divided by the requests answered. `json-250` is the soak's submission: 250 answers of a generated form, no
// service (bench/soak.bench.mjs adds one). A figure for reading (no goal): the sum is what caps
// throughput when both cores are busy, and its split says which side a change must shrink.
// The API's CPU is also split by thread (/proc/<pid>/task/*/stat, named by Node 24): its main
// thread, V8's worker threads (concurrent marking and sweeping of the garbage collector) and
// libuv's thread pool (file-system calls): a major GC shows as V8 workers, a slow file create as
// the pool (docs/benchmarks.md, "cpu-per-request").
import { createRequire } from 'node:module';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { cpuOf, createForm, must, postgresCpu, postmasterPidOf, report, SMALL_FORM_FIELDS, smallSubmission, startCollect, threadCpu, userToken } from './bench-helpers.mjs';
import { largeForm, largeSubmission, openRosaPhotoBodies, photoJpeg, PHOTO_FORM_FIELDS } from './intake-fixtures.mjs';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
// BENCH_CPU_CASES: a comma-separated subset of the cases (user, json, json-250, openrosa, data-page).
const ONLY = process.env.BENCH_CPU_CASES ? new Set(process.env.BENCH_CPU_CASES.split(',')) : null;

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
try {
  collect = await startCollect({ pg, redis, database: 'bench_collect_cpu' });
  const base = collect.url;
  const apiPid = collect.api.child.pid;
  const postmaster = await postmasterPidOf(createRequire(new URL('../apps/collect-api/package.json', import.meta.url))('pg'), pg.adminUrl);
  const token = await userToken(base);
  const form = await createForm(base, token, { id_string: 'bench', title: 'Bench', fields: SMALL_FORM_FIELDS });
  await createForm(base, token, { id_string: 'bench_photo', title: 'Bench photo', fields: PHOTO_FORM_FIELDS });
  const large = largeForm('soak', 250);
  await createForm(base, token, large);
  const jpeg = await photoJpeg(100 * 1024);
  const photoBodies = openRosaPhotoBodies('bench_photo', jpeg);
  for (let i = 0; i < 100; i++) await must(fetch(`${base}/api/v1/submissions`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: smallSubmission('bench') }), 201);
  const cases = {
    user: { url: `${base}/api/v1/user`, headers: { authorization: token } },
    json: { url: `${base}/api/v1/submissions`, method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, requests: [{ setupRequest: (req) => ({ ...req, body: smallSubmission('bench') }) }] },
    'json-250': { url: `${base}/api/v1/submissions`, method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, requests: [{ setupRequest: (req) => ({ ...req, body: largeSubmission(large) }) }] },
    openrosa: {
      url: `${base}/submission`, method: 'POST', headers: { authorization: token, 'content-type': photoBodies.contentType },
      requests: [{ setupRequest: (req) => ({ ...req, body: photoBodies.next() }) }],
    },
    'data-page': { url: `${base}/api/v1/data/${form.formid}?page_size=100`, headers: { authorization: token } },
  };
  for (const name of Object.keys(cases)) if (ONLY && !ONLY.has(name)) delete cases[name];
  for (const c of Object.values(cases)) await autocannon({ ...c, connections: CONNECTIONS, duration: 1 }); // warm-up
  for (const [name, c] of Object.entries(cases)) {
    const before = { api: cpuOf(apiPid), threads: threadCpu(apiPid), pg: postgresCpu(postmaster), load: process.cpuUsage() };
    const result = await autocannon({ ...c, connections: CONNECTIONS, duration: DURATION });
    const load = process.cpuUsage(before.load);
    const n = result.requests.total;
    const api = (cpuOf(apiPid) - before.api) / n;
    const db = (postgresCpu(postmaster) - before.pg) / n;
    const gen = (load.user + load.system) / n;
    const threads = threadCpu(apiPid);
    const split = Object.keys(threads).map((k) => `${k} ${Math.round((threads[k] - before.threads[k]) / n)}`).join(', ');
    console.log(`${name}: ${n} requests (${result.non2xx} non-2xx), ${Math.round(n / DURATION)}/s; CPU per request: API ${Math.round(api)} µs (${split}), PostgreSQL ${Math.round(db)} µs, load generator ${Math.round(gen)} µs`);
    report(`CPU per request ${name}: API`, api, { unit: 'µs', digits: 0 });
    report(`CPU per request ${name}: PostgreSQL`, db, { unit: 'µs', digits: 0 });
  }
} finally {
  await collect?.stop();
  await redis.stop();
  await pg.stop();
}
