// Idle resident memory of each process after start-up (goal <= 150 MB each): the
// built collect-api, its delivery worker and the CAS start as their own processes (embedded
// PostgreSQL, redis-server, the CAS with its dev seed), answer /health/ready, then sit idle for
// BENCH_IDLE_SECONDS; the RSS is read from /proc/<pid>/status (VmRSS; VmHWM, the peak since
// start, is printed beside it). A fixed goal rather than a ratio: memory is a budget per pod
// (the Helm chart's requests), not a speed, and does not move with the machine's load the way
// throughput does. No profiler or probe is loaded into these processes.
import { freePort, startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { CAS_DEV_SEED, CAS_MAIN, hugePagesOf, report, rssOf, sleep, startCollect, startService } from './bench-helpers.mjs';

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 5);
const MB = 1 << 20;

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
let cas;
try {
  const casPort = await freePort();
  cas = await startService('cas', CAS_MAIN, {
    NODE_ENV: 'development', CAS_PORT: String(casPort), CAS_HOST: '127.0.0.1',
    CAS_ISSUER: `http://127.0.0.1:${casPort}`, CAS_DATABASE_URL: await pg.createDatabase('bench_idle_cas'), CAS_DEV_SEED_FILE: CAS_DEV_SEED,
  }, casPort);
  collect = await startCollect({ pg, redis, database: 'bench_idle_collect', worker: true, env: { CAS_ISSUER: `http://127.0.0.1:${casPort}` } });
  await sleep(IDLE_SECONDS * 1000);
  const processes = { 'collect-api': collect.api, 'collect-api worker': collect.worker, cas };
  const memory = Object.fromEntries(Object.entries(processes).map(([name, p]) => [name, { ...rssOf(p.child.pid), huge: hugePagesOf(p.child.pid) }]));
  for (const [name, m] of Object.entries(memory)) {
    console.log(`${name}: RSS ${(m.rss / MB).toFixed(0)} MB (anonymous ${(m.anon / MB).toFixed(0)}, file-backed ${(m.file / MB).toFixed(0)}; huge pages: anonymous ${(m.huge.anon / MB).toFixed(0)}, file ${(m.huge.file / MB).toFixed(0)}), peak since start ${(m.peak / MB).toFixed(0)} MB (after ready + ${IDLE_SECONDS} s idle)`);
  }
  for (const [name, m] of Object.entries(memory)) report(`idle RSS ${name}`, m.rss / MB, { goal: '<= 150', unit: 'MB', digits: 0 });
} finally {
  await collect?.stop();
  await cas?.stop();
  await redis.stop();
  await pg.stop();
}
