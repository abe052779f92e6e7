import fc from 'fast-check';
import {
  formBodies, fuzzSettings, fuzzSummary, fuzzTarget, knownQueryStrings, nastyString, pathSegment, queryStrings, RowCounter, type FuzzOutcome, type FuzzRequest, type FuzzTarget,
} from '@collect/testing';
import { FormLogin } from './support/form-login.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

/**
 * Property: the CAS's endpoints answer any input with 2xx/3xx/4xx in their documented shape
 * (OAuth endpoints RFC 6749, cas-api `{"detail"}`, pages HTML), in time, and a refused token
 * request stores nothing. Same seeds and FUZZ_RUNS as the collect-api suite.
 *
 * To cover a new endpoint, add one row to `targets()`.
 */
const settings = fuzzSettings(100);
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const none = { kind: 'none' as const };

describe('hardening: fuzzing cas endpoints', () => {
  let cas: TestCasApp;
  let rows: RowCounter;
  let searchToken: string;
  const outcomes: FuzzOutcome[] = [];

  beforeAll(async () => {
    // Rate limits and lockout are tested elsewhere; here every case must reach the handler.
    cas = await startTestCasApp({
      CAS_DEV_SEED_FILE: DEV_SEED, CAS_LOGIN_MAX_FAILURES_PER_IP: '100000', CAS_LOGIN_MAX_FAILURES_PER_USER: '1000',
      RATE_LIMIT_TOKEN_PER_IP: '1000000', RATE_LIMIT_TOKEN_PER_CLIENT: '1000000', RATE_LIMIT_LOGIN_PER_IP: '1000000',
    });
    rows = new RowCounter(cas.config.CAS_DATABASE_URL);
    const res = await fetch(`${cas.url}/connect/token`, {
      method: 'POST',
      headers: { Authorization: basic('demo-onboarding', 'demo-onboarding-secret'), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' }).toString(),
    });
    searchToken = ((await res.json()) as { access_token: string }).access_token;
    expect(searchToken).toBeTruthy();
  });
  afterAll(async () => {
    await rows?.close();
    await cas?.close();
  });

  /** A fresh login page of a real code flow: its interaction path and cookies. */
  async function freshInteraction(): Promise<{ path: string; headers: Record<string, string> }> {
    const browser = new FormLogin(cas.url);
    const qs = new URLSearchParams({ client_id: 'collect-web', response_type: 'code', scope: 'openid read', redirect_uri: 'http://localhost:3000/auth/callback', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's' });
    const page = await browser.follow(`/connect/authorize?${qs}`);
    const uid = new URL(page.url).pathname.split('/')[2];
    // FormLogin keeps its jar private; the login POST needs the interaction cookies it holds.
    const jar = (browser as unknown as { cookies: Map<string, string> }).cookies;
    return { path: `/interaction/${uid}/login`, headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } };
  }

  function targets(): FuzzTarget[] {
    const grants = fc.constantFrom('client_credentials', 'authorization_code', 'refresh_token', 'password', 'urn:ietf:params:oauth:grant-type:device_code', 'implicit', '');
    const tokenFields = { grant_type: grants, scope: fc.constantFrom('read', 'read write', 'openid', 'adminui-api-wrapper', ''), resource: fc.constantFrom('urn:cas:resource:collect-api', 'urn:cas:resource:cas-api', 'collect-api', 'https://x.example', ''), code: nastyString(), refresh_token: nastyString(), redirect_uri: fc.constant('http://localhost:3000/auth/callback'), code_verifier: nastyString(), client_id: fc.constantFrom('demo-machine', 'collect-web', 'demo-implicit'), client_secret: nastyString(), client_assertion: nastyString() };
    const query = (params: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<FuzzRequest> => queryStrings(params).map((q) => ({ body: none, query: q }));
    return [
      { name: 'POST /connect/token (demo-machine)', method: 'POST', path: '/connect/token', headers: { Authorization: basic('demo-machine', 'demo-machine-secret') }, answers: 'oauth', tables: ['oidc_payloads'],
        input: formBodies(tokenFields).map((body) => ({ body })) },
      { name: 'POST /connect/token (fuzzed client auth)', method: 'POST', path: '/connect/token', answers: 'oauth', tables: ['oidc_payloads'],
        input: fc.record({ body: formBodies(tokenFields), headers: fc.record({ Authorization: fc.oneof(nastyString().map((s) => basic(s.slice(0, 300), 'x')), fc.constant(basic('demo-machine', 'wrong')), fc.constant(basic('collect-web', '')), fc.constant('Bearer x'), nastyString().map((s) => `Basic ${s.replace(/[^\x20-\x7e]/g, '').slice(0, 500)}`)) }) }) },
      { name: 'POST /connect/introspect', method: 'POST', path: '/connect/introspect', headers: { Authorization: basic('demo-machine', 'demo-machine-secret') }, answers: 'oauth', weight: 0.3,
        input: formBodies({ token: fc.oneof(nastyString(), fc.constant(searchToken)), token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'x') }).map((body) => ({ body })) },
      { name: 'POST /connect/revocation', method: 'POST', path: '/connect/revocation', headers: { Authorization: basic('demo-machine', 'demo-machine-secret') }, answers: 'oauth', weight: 0.3,
        input: formBodies({ token: nastyString(), token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'x') }).map((body) => ({ body })) },
      { name: 'GET /connect/authorize (query)', method: 'GET', path: '/connect/authorize', answers: 'html', weight: 0.5,
        input: query({ client_id: fc.constantFrom('collect-web', 'demo-implicit', 'nope'), response_type: fc.constantFrom('code', 'id_token token', 'token'), scope: fc.constantFrom('openid', 'openid read'), redirect_uri: fc.constantFrom('http://localhost:3000/auth/callback', 'https://evil.example/'), code_challenge: nastyString(), code_challenge_method: fc.constantFrom('S256', 'plain'), state: nastyString(), nonce: nastyString(), prompt: fc.constantFrom('login', 'none', 'consent') }) },
      { name: 'GET /api/users (query)', method: 'GET', path: '/api/users', headers: { Authorization: `Bearer ${searchToken}` }, answers: 'drf',
        input: query({ search: nastyString(), page: fc.nat().map(String), page_size: fc.nat().map(String) }) },
      // The query DTO refuses unknown parameters, which most cases above carry: these reach the search.
      { name: 'GET /api/users (known parameters)', method: 'GET', path: '/api/users', headers: { Authorization: `Bearer ${searchToken}` }, answers: 'drf', weight: 0.5,
        input: knownQueryStrings({ search: fc.oneof(nastyString(), fc.constantFrom('demo', 'a', '%', '_', ' ')), username: fc.constantFrom('demo', 'DEMO', ''), email: fc.constantFrom('demo@example.org', ''), page: fc.constantFrom('1', '2', '0', '', 'x'), page_size: fc.constantFrom('1', '100', '1000', '0') }).map((q) => ({ body: none, query: q })) },
      { name: 'GET /api/users/:id', method: 'GET', path: '/api/users/1', headers: { Authorization: `Bearer ${searchToken}` }, answers: 'drf', weight: 0.5,
        input: pathSegment().map((id) => ({ body: none, path: `/api/users/${id}` })) },
      { name: 'GET /api/users (fuzzed token)', method: 'GET', path: '/api/users', answers: 'drf', weight: 0.5,
        input: nastyString().map((s) => ({ body: none, headers: { Authorization: `Bearer ${s.replace(/[^\x20-\x7e]/g, '').slice(0, 4000)}` } })) },
      { name: 'POST /interaction/:uid/login', method: 'POST', path: freshInteraction, answers: 'html', tables: ['cas_accounts'],
        input: formBodies({ username: fc.constantFrom('demo', 'DEMO', ''), password: nastyString() }).map((body) => ({ body })) },
      { name: 'POST /interaction/:uid/login (bad uid)', method: 'POST', path: '/interaction/x/login', answers: 'html', weight: 0.3,
        input: fc.tuple(pathSegment(), formBodies({ username: fc.constant('demo'), password: fc.constant('demo-password') })).map(([uid, body]) => ({ body, path: `/interaction/${uid}/login` })) },
    ];
  }

  it('answers every generated request in the documented shape, in time, with nothing partial stored', async () => {
    for (const target of targets()) outcomes.push(await fuzzTarget(target, { baseUrl: cas.url, settings, rows }));
    console.log(fuzzSummary('cas', settings, outcomes));
    expect(outcomes.reduce((n, o) => n + o.cases, 0)).toBeGreaterThan(0);
    // The run grows with FUZZ_RUNS (each case has its own 10 s deadline); ~1 min at the CI default on a loaded machine.
  }, 600_000);
});
