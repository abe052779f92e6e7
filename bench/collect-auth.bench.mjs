// Requests per second on GET /api/v1/user with `Token` and with `Bearer` (local /o/ access
// token) ÷ requests per second on the unauthenticated GET /api/v1/ in the same run (goal
// >= 0.8 each: auth must not dominate the cost of a request). The built collect-api runs
// as its own process on embedded PostgreSQL + redis-server; autocannon drives it. Rounds are
// interleaved and the median of each is used, so a noisy neighbour hits all three alike.
// Personal access tokens: GET /api/v1/forms with a `Token cpat_...` ÷ the same GET with the
// user's api_token (goal >= 0.95: a personal token costs no more than the api_token; docs/auth.md).
import { freePort, startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { COLLECT_MAIN, median, must, requestsPerSecond, startService } from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
const port = await freePort();
let api;
try {
  api = await startService(
    'api',
    COLLECT_MAIN,
    {
      NODE_ENV: 'test',
      COLLECT_PORT: String(port),
      COLLECT_HOST: '127.0.0.1',
      DATABASE_URL: await pg.createDatabase('bench_collect_auth'),
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'bench',
    },
    port,
  );
  const base = api.url;
  const { token, bearer, pat } = await credentials(base);

  const cases = {
    'GET /api/v1/ (anonymous, baseline)': { url: `${base}/api/v1/`, headers: {} },
    'GET /api/v1/user (Token)': { url: `${base}/api/v1/user`, headers: { authorization: `Token ${token}` } },
    'GET /api/v1/user (Bearer)': { url: `${base}/api/v1/user`, headers: { authorization: `Bearer ${bearer}` } },
    'GET /api/v1/forms (Token, api_token)': { url: `${base}/api/v1/forms`, headers: { authorization: `Token ${token}` } },
    'GET /api/v1/forms (Token, personal token)': { url: `${base}/api/v1/forms`, headers: { authorization: `Token ${pat}` } },
  };
  for (const c of Object.values(cases)) await requestsPerSecond(c, 1, CONNECTIONS); // warm-up: JIT, pools, caches
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [name, c] of Object.entries(cases)) results[name].push(await requestsPerSecond(c, DURATION, CONNECTIONS));
  const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  for (const [name, rps] of Object.entries(rate)) console.log(`${name}: ${Math.round(rps)} req/s (median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  const baseline = rate['GET /api/v1/ (anonymous, baseline)'];
  console.log(`ratio Token/anonymous: ${(rate['GET /api/v1/user (Token)'] / baseline).toFixed(2)} (goal >= 0.8)`);
  console.log(`ratio Bearer/anonymous: ${(rate['GET /api/v1/user (Bearer)'] / baseline).toFixed(2)} (goal >= 0.8)`);
  console.log(`ratio personal token/api_token: ${(rate['GET /api/v1/forms (Token, personal token)'] / rate['GET /api/v1/forms (Token, api_token)']).toFixed(2)} (goal >= 0.95)`);
} finally {
  await api?.stop();
  await redis.stop();
  await pg.stop();
}

/** A user with an API token, a personal token, and a Bearer token from the real /o/authorize -> /o/token flow. */
async function credentials(base) {
  const user = { username: 'bench', password: 'bench-password', email: 'bench@example.org' };
  await must(fetch(`${base}/api/v1/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(user) }), 201);
  const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const me = await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: basic } }), 200)).json();
  const app = await (
    await must(
      fetch(`${base}/api/v1/oauth-applications`, {
        method: 'POST',
        headers: { authorization: `Token ${me.api_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench', client_type: 'confidential', authorization_grant_type: 'authorization-code', redirect_uris: 'http://127.0.0.1:9/cb' }),
      }),
      201,
    )
  ).json();

  // The pages' flow without a browser: cookies by hand, CSRF token from the form.
  const cookies = new Map();
  const keep = (res) => {
    for (const c of res.headers.getSetCookie()) cookies.set(c.split('=')[0], c.split(';')[0]);
    return res;
  };
  const cookie = () => [...cookies.values()].join('; ');
  const csrfOf = (html) => /name="csrf_token" value="([^"]+)"/.exec(html)[1];
  const authorize = `/o/authorize?${new URLSearchParams({ client_id: app.client_id, response_type: 'code', state: 'bench' })}`;
  const loginPage = await keep(await must(fetch(base + authorize), 200)).text();
  const form = (fields) => ({ method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() }, body: new URLSearchParams(fields) });
  keep(await must(fetch(`${base}/o/login`, form({ username: user.username, password: user.password, next: authorize, csrf_token: csrfOf(loginPage) })), 303));
  const consent = await keep(await must(fetch(base + authorize, { headers: { cookie: cookie() } }), 200)).text();
  const hidden = Object.fromEntries([...consent.matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2].replace(/&amp;/g, '&')]));
  const decided = await must(fetch(`${base}/o/authorize`, form({ ...hidden, decision: 'allow' })), 302);
  const code = new URL(decided.headers.get('location')).searchParams.get('code');
  const tokens = await (
    await must(
      fetch(`${base}/o/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code }),
      }),
      200,
    )
  ).json();
  const pat = await (
    await must(fetch(`${base}/api/v1/api-tokens`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', scopes: ['read'] }) }), 201)
  ).json();
  return { token: me.api_token, bearer: tokens.access_token, pat: pat.token };
}

