import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const form = (fields: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() });

/** One case per 500 that fuzzing (hardening-fuzz.e2e.ts) found in the CAS, replayed by hand. */
describe('hardening: regressions found by fuzzing (cas)', () => {
  let cas: TestCasApp;

  beforeAll(async () => {
    cas = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED });
  });
  afterAll(() => cas?.close());

  async function post(path: string, fields: Record<string, string>, auth?: string) {
    const { body, ...headers } = form(fields);
    return fetch(`${cas.url}${path}`, { method: 'POST', headers: { ...headers, ...(auth ? { Authorization: auth } : {}) }, body });
  }

  it('a NUL in a token, a client_id or a refresh token is simply not found (was a PostgreSQL error, 500)', async () => {
    const introspect = await post('/connect/introspect', { token: 'a\u0000b' }, basic('demo-machine', 'demo-machine-secret'));
    expect(introspect.status).toBe(200);
    expect(await introspect.json()).toEqual({ active: false });
    const revoke = await post('/connect/revocation', { token: 'a\u0000b' }, basic('demo-machine', 'demo-machine-secret'));
    expect(revoke.status).toBe(200);
    const client = await post('/connect/token', { grant_type: 'client_credentials' }, basic('demo\u0000machine', 'x'));
    expect([400, 401]).toContain(client.status);
    expect(await client.json()).toMatchObject({ error: expect.stringMatching(/^invalid_(client|request)$/) });
  });

  it('cas-api search with a NUL: 400 {"detail"} (was 500)', async () => {
    const tokenRes = await post('/connect/token', { grant_type: 'client_credentials', scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' }, basic('demo-onboarding', 'demo-onboarding-secret'));
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const res = await fetch(`${cas.url}/api/users?search=a%00b`, { headers: { Authorization: `Bearer ${access_token}` } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: expect.stringContaining('NUL') });
  });
});
