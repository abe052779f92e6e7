// JSON submissions per second (POST /api/v1/submissions, Token auth, every request a new
// instance: role check, idempotency lookup, insert, counters, event hooks in one transaction)
// ÷ requests per second of the authenticated GET /api/v1/user in the same run (auth + one DB
// read: the floor of any authenticated call), and ÷ GET /health/live for reference (issue 7).
// Also reads: GET /api/v1/data/{form} pages of 100 submissions ÷ the same baseline.
// The built collect-api runs as its own process on embedded PostgreSQL + redis-server.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startPostgres, startRedis, startServiceProcess } from '../libs/testing/dist/index.js';
import { median, must, requestsPerSecond } from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const MAIN = fileURLToPath(new URL('../apps/collect-api/dist/main.js', import.meta.url));

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
const port = await freePort();
let api;
try {
  api = await startServiceProcess(
    MAIN,
    {
      NODE_ENV: 'test', LOG_LEVEL: 'warn', COLLECT_PORT: String(port), COLLECT_HOST: '127.0.0.1',
      DATABASE_URL: await pg.createDatabase('bench_collect_submissions'), REDIS_URL: redis.url, REDIS_PREFIX: 'bench',
      MEDIA_ROOT: mkdtempSync(join(tmpdir(), 'bench-media-')),
    },
    port,
  );
  const base = api.url;
  const user = { username: 'bench', password: 'bench-password', email: 'bench@example.org' };
  await must(fetch(`${base}/api/v1/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(user) }), 201);
  const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const me = await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: basic } }), 200)).json();
  const token = `Token ${me.api_token}`;
  const form = await (
    await must(
      fetch(`${base}/api/v1/forms`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({
          id_string: 'bench', title: 'Bench',
          fields: [{ name: 'name', type: 'text' }, { name: 'age', type: 'integer' }, { name: 'loc', type: 'geopoint' }, { name: 'g', type: 'group', children: [{ name: 'a', type: 'text' }, { name: 'b', type: 'decimal' }] }],
        }),
      }),
      201,
    )
  ).json();
  const submission = () => JSON.stringify({ id: 'bench', submission: { name: 'Jane', age: 34, loc: '-1.28 36.81 0 0', g: { a: 'x', b: 1.5 }, meta: { instanceID: `uuid:${randomUUID()}` } } });
  for (let i = 0; i < 100; i++) await must(fetch(`${base}/api/v1/submissions`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: submission() }), 201);

  const cases = {
    'GET /api/v1/user (Token, baseline)': { url: `${base}/api/v1/user`, headers: { authorization: token } },
    'GET /health/live (reference)': { url: `${base}/health/live`, headers: {} },
    'POST /api/v1/submissions (JSON, new instance each)': {
      url: `${base}/api/v1/submissions`, method: 'POST', headers: { authorization: token, 'content-type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: submission() }), expect: 201,
    },
    'GET /api/v1/data/{form}?page_size=100': { url: `${base}/api/v1/data/${form.formid}?page_size=100`, headers: { authorization: token } },
  };
  for (const c of Object.values(cases)) await requestsPerSecond(c, 1, CONNECTIONS);
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [name, c] of Object.entries(cases)) results[name].push(await requestsPerSecond(c, DURATION, CONNECTIONS));
  const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  for (const [name, rps] of Object.entries(rate)) console.log(`${name}: ${Math.round(rps)} req/s (median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  const baseline = rate['GET /api/v1/user (Token, baseline)'];
  console.log(`ratio submissions/user: ${(rate['POST /api/v1/submissions (JSON, new instance each)'] / baseline).toFixed(2)}`);
  console.log(`ratio data-page-100/user: ${(rate['GET /api/v1/data/{form}?page_size=100'] / baseline).toFixed(2)}`);
  console.log(`ratio submissions/health-live: ${(rate['POST /api/v1/submissions (JSON, new instance each)'] / rate['GET /health/live (reference)']).toFixed(2)} (reference)`);
} finally {
  await api?.stop();
  await redis.stop();
  await pg.stop();
}

