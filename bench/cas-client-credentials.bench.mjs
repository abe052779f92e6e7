// Client-credentials tokens per second from the real CAS over HTTP (autocannon, form-encoded
// POST /connect/token, client_secret_basic) ÷ raw RS256 signatures per second (node:crypto.sign,
// RSA-2048, one thread) measured in the same run. Each token costs one RS256 signature, so the
// ratio says how much of the signing budget the HTTP + oidc-provider + client-lookup path keeps.
// Goal: ratio >= 0.4.
// Real parts: embedded PostgreSQL, the built CAS (apps/cas/dist/main.js) as a child process with
// the dev seed, audit logging at its normal level (info).
import { generateKeyPairSync, sign } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, startPostgres, startServiceProcess } from '../libs/testing/dist/index.js';
import { runMigrations } from '../apps/cas/dist/database/data-source.js';
import { logLevelEnv, median, SERVICE_OUTPUT_KEPT } from './bench-helpers.mjs';

const CAS_MAIN = fileURLToPath(new URL('../apps/cas/dist/main.js', import.meta.url));
const DEV_SEED = fileURLToPath(new URL('../apps/cas/seed/dev-seed.json', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5); // interleaved rounds, median: the machine is shared
const DURATION = Number(process.env.BENCH_DURATION_S ?? 3); // seconds of HTTP load per round
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SIGN_ROUND_MS = 1000;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
function rawSignsPerSecond() {
  const data = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJkZW1vLW1hY2hpbmUiLCJzY29wZSI6InJlYWQgd3JpdGUifQ');
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(SIGN_ROUND_MS) * 1_000_000n;
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 20; i++) sign('sha256', data, privateKey);
    n += 20;
  }
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

const pgServer = await startPostgres({ fast: true });
let cas;
try {
  const dbUrl = await pgServer.createDatabase('cas_bench');
  await runMigrations({ CAS_DATABASE_URL: dbUrl, CAS_DATABASE_POOL_SIZE: 2 });
  const port = await freePort();
  cas = await startServiceProcess(CAS_MAIN, {
    NODE_ENV: 'development',
    CAS_PORT: String(port),
    CAS_HOST: '127.0.0.1',
    CAS_ISSUER: `http://127.0.0.1:${port}`,
    CAS_DATABASE_URL: dbUrl,
    CAS_DEV_SEED_FILE: DEV_SEED,
    ...logLevelEnv(),
    // Counted as in production (one PostgreSQL upsert per rule), never reached: the bench measures the token path.
    RATE_LIMIT_TOKEN_PER_IP: '1000000',
    RATE_LIMIT_TOKEN_PER_CLIENT: '1000000',
    RATE_LIMIT_ENABLED: process.env.BENCH_RATE_LIMITS ?? 'true',
  }, port, 60_000, [], SERVICE_OUTPUT_KEPT);

  const request = {
    method: 'POST',
    path: '/connect/token',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('demo-machine:demo-machine-secret').toString('base64')}`,
    },
    body: 'grant_type=client_credentials&scope=read%20write',
  };
  const check = await fetch(`${cas.url}${request.path}`, { method: 'POST', headers: request.headers, body: request.body });
  if (check.status !== 200) throw new Error(`token request failed: ${check.status} ${await check.text()}`);

  // Warm-up (JIT, connection pool, client cache), then rounds of baseline and HTTP load in turn.
  await autocannon({ url: cas.url, connections: CONNECTIONS, duration: 2, requests: [request] });
  const rounds = [];
  let failures = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const signs = rawSignsPerSecond();
    const run = await autocannon({ url: cas.url, connections: CONNECTIONS, duration: DURATION, requests: [request] });
    failures += run.non2xx + run.errors;
    const tokens = run['2xx'] / DURATION;
    rounds.push({ signs, tokens, ratio: tokens / signs, p50: run.latency.p50, p99: run.latency.p99 });
    console.log(`round ${r + 1}: raw RS256 signs ${Math.round(signs)}/s, tokens ${Math.round(tokens)}/s (p50 ${run.latency.p50} ms, p99 ${run.latency.p99} ms)`);
  }
  if (failures) throw new Error(`${failures} token requests failed`);
  console.log(`raw RS256 signs (node:crypto, RSA-2048, 1 thread): median ${Math.round(median(rounds.map((x) => x.signs)))}/s`);
  console.log(`client-credentials tokens over HTTP (${CONNECTIONS} connections): median ${Math.round(median(rounds.map((x) => x.tokens)))}/s`);
  console.log(`ratio tokens-per-second/raw-signs-per-second: ${median(rounds.map((x) => x.ratio)).toFixed(2)} (median of ${ROUNDS} rounds; goal >= 0.4)`);
} finally {
  await cas?.stop();
  await pgServer.stop();
}
