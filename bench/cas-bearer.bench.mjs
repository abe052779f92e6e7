// Requests per second on GET /api/v1/user with a CAS client-credentials token (RS256 JWT checked
// by libs/jwt-validation, then the service-account lookup) ÷ the same request with a local
// `Token` (hash lookup, cached) in the same run. Goal >= 0.9: accepting CAS tokens must not make the API noticeably slower than its own tokens.
// Real parts: embedded PostgreSQL, redis-server, the built CAS and collect-api as child
// processes (dev seed, demo-machine linked as a service account); autocannon drives them.
// Rounds are interleaved and the median of each is used (the machine is shared).
import { freePort, startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { CAS_DEV_SEED, CAS_MAIN, COLLECT_MAIN, median, must, profiled, report, requestsPerSecond, startService, writeProfileWindows } from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
let cas;
let api;
try {
  const casPort = await freePort();
  const collectPort = await freePort();
  const issuer = `http://127.0.0.1:${casPort}`;
  cas = await startService('cas', CAS_MAIN, {
    NODE_ENV: 'development',
    CAS_PORT: String(casPort),
    CAS_HOST: '127.0.0.1',
    CAS_ISSUER: issuer,
    CAS_DATABASE_URL: await pg.createDatabase('bench_cas_bearer_cas'),
    CAS_DEV_SEED_FILE: CAS_DEV_SEED,
  }, casPort);
  api = await startService('api', COLLECT_MAIN, {
    NODE_ENV: 'test',
    COLLECT_PORT: String(collectPort),
    COLLECT_HOST: '127.0.0.1',
    DATABASE_URL: await pg.createDatabase('bench_cas_bearer_collect'),
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'bench',
    CAS_ISSUER: issuer,
  }, collectPort);
  const base = api.url;
  const admin = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;
  await must(fetch(`${base}/api/v1/service-accounts`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'demo-machine' }) }), 201);
  const apiToken = (await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: admin } }), 200)).json()).api_token;
  const tokens = await (await must(fetch(`${issuer}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('demo-machine:demo-machine-secret').toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read write' }),
  }), 200)).json();

  const cases = {
    'GET /api/v1/user (local Token, baseline)': { url: `${base}/api/v1/user`, headers: { authorization: `Token ${apiToken}` } },
    'GET /api/v1/user (CAS Bearer, service account)': { url: `${base}/api/v1/user`, headers: { authorization: `Bearer ${tokens.access_token}` } },
  };
  for (const c of Object.values(cases)) await requestsPerSecond(c, 1, CONNECTIONS); // warm-up: JIT, pools, JWKS
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const windowOf = (name) => (name.includes('Bearer') ? 'bearer' : 'token'); // BENCH_CPU_PROF windows
  for (let r = 0; r < ROUNDS; r++) for (const [name, c] of Object.entries(cases)) results[name].push(await profiled(windowOf(name), () => requestsPerSecond(c, DURATION, CONNECTIONS)));
  const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  for (const [name, rps] of Object.entries(rate)) console.log(`${name}: ${Math.round(rps)} req/s (median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  const [baseline, casBearer] = Object.values(rate);
  report('ratio CAS-Bearer/Token', casBearer / baseline, { goal: '>= 0.9' });
  writeProfileWindows();
} finally {
  await api?.stop();
  await cas?.stop();
  await redis.stop();
  await pg.stop();
}

