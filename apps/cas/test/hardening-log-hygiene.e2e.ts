import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freshTestDatabase, SecretLedger, startServiceProcess, type ServiceProcess } from '@collect/testing';
import { FormLogin } from './support/form-login.js';
import { DEV_SEED } from './test-app.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/**
 * Drives the CAS flows in a child process at LOG_LEVEL=trace with known secrets (user and
 * client passwords, PKCE verifier, code, JWT access, ID and refresh tokens) and asserts that
 * none of them appears in any line it logged.
 */
describe('hardening: log hygiene (cas)', () => {
  let proc: ServiceProcess;
  const secrets = new SecretLedger();
  const keep = (name: string, value: unknown) => secrets.keep(name, value);
  const redirect = 'http://127.0.0.1:9/cb';

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cas-logs-'));
    const seed = join(dir, 'seed.json');
    writeFileSync(seed, JSON.stringify({
      clients: [
        { client_id: 'logs-web', client_secret: keep('web client secret', 'W3b-client-secret-for-logs'), grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scopes: ['openid', 'offline_access', 'read'], resources: ['collect-api'], redirect_uris: [redirect], token_endpoint_auth_method: 'client_secret_basic' },
        { client_id: 'logs-machine', client_secret: keep('machine client secret', 'M4chine-client-secret-for-logs'), grant_types: ['client_credentials'], scopes: ['read'], resources: ['collect-api'], token_endpoint_auth_method: 'client_secret_post' },
      ],
      users: [{ username: 'loguser', password: keep('user password', 'Us3r-pa55word-for-cas-logs'), email: 'log@example.org', given_name: 'Log', family_name: 'User', enabled: true }],
    }));
    keep('onboarding client secret', 'demo-onboarding-secret');
    const port = await freePort();
    proc = await startServiceProcess(MAIN, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'trace',
      CAS_PORT: String(port),
      CAS_HOST: '127.0.0.1',
      CAS_ISSUER: `http://127.0.0.1:${port}`,
      CAS_DATABASE_URL: await freshTestDatabase('cas_logs'),
      CAS_DEV_SEED_FILE: DEV_SEED,
      CAS_SEED_FILE: seed,
      CAS_KEY_ENCRYPTION_KEY: keep('key encryption key', 'key-encryption-key-for-log-hygiene'),
      CAS_COOKIE_KEYS: keep('cookie key', 'cookie-key-for-the-log-hygiene-test'),
    }, port);
  });
  afterAll(() => proc?.stop());

  it('never logs a password, client secret, code, verifier or token', async () => {
    const url = proc.url;
    const form = (fields: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() });
    const post = async (path: string, fields: Record<string, string>, auth?: string) => {
      const { body, ...headers } = form(fields);
      return fetch(`${url}${path}`, { method: 'POST', headers: { ...headers, ...(auth ? { Authorization: auth } : {}) }, body });
    };

    // Client credentials (secret in the body) and the user-search API.
    const machine = (await (await post('/connect/token', { grant_type: 'client_credentials', scope: 'read', client_id: 'logs-machine', client_secret: secrets.get('machine client secret') })).json()) as { access_token: string };
    keep('machine access token', machine.access_token);
    const onboarding = (await (await post('/connect/token', { grant_type: 'client_credentials', scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' }, basic('demo-onboarding', 'demo-onboarding-secret'))).json()) as { access_token: string };
    keep('cas-api access token', onboarding.access_token);
    expect((await fetch(`${url}/api/users?search=log`, { headers: { Authorization: `Bearer ${onboarding.access_token}` } })).status).toBe(200);
    expect((await post('/connect/introspect', { token: machine.access_token }, basic('logs-web', secrets.get('web client secret')))).status).toBeLessThan(500);
    expect((await post('/connect/token', { grant_type: 'client_credentials' }, basic('logs-web', keep('wrong client secret', 'Wr0ng-client-secret-for-logs')))).status).toBe(401);

    // Code flow with PKCE: a failed login first, then the right password.
    const verifier = keep('pkce verifier', randomBytes(32).toString('base64url'));
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = `/connect/authorize?${new URLSearchParams({ client_id: 'logs-web', response_type: 'code', scope: 'openid offline_access read', redirect_uri: redirect, state: 'st', prompt: 'consent', code_challenge: challenge, code_challenge_method: 'S256' })}`;
    const wrong = new FormLogin(url);
    const page = await wrong.follow(authorize);
    const action = [...page.body.matchAll(/<form[^>]*action="([^"]+)"/g)].map((m) => m[1]).find((a) => a.endsWith('/login'))!;
    await wrong.submit(action, { username: 'loguser', password: keep('wrong password', 'Wr0ng-pa55word-for-cas-logs') });
    const callback = await new FormLogin(url).authorize(authorize, 'loguser', secrets.get('user password'));
    const code = keep('authorization code', callback.searchParams.get('code'));
    const webAuth = basic('logs-web', secrets.get('web client secret'));
    const tokens = (await (await post('/connect/token', { grant_type: 'authorization_code', code, redirect_uri: redirect, code_verifier: verifier }, webAuth)).json()) as { access_token: string; refresh_token: string; id_token: string };
    keep('user access token', tokens.access_token);
    keep('refresh token', tokens.refresh_token);
    keep('id token', tokens.id_token);
    expect((await fetch(`${url}/connect/userinfo`, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status).toBeLessThan(500);
    const refreshed = (await (await post('/connect/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, webAuth)).json()) as { refresh_token: string; access_token: string };
    keep('rotated refresh token', refreshed.refresh_token);
    keep('refreshed access token', refreshed.access_token);
    // Replays are refused and logged.
    expect((await post('/connect/token', { grant_type: 'authorization_code', code, redirect_uri: redirect, code_verifier: verifier }, webAuth)).status).toBe(400);
    expect((await post('/connect/revocation', { token: refreshed.refresh_token }, webAuth)).status).toBe(200);

    await proc.stop();
    const lines = proc.output().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.some((l) => l.includes('login.failure'))).toBe(true);
    const leaks = secrets.leaks(lines, 'cas');
    expect(leaks).toEqual([]);
    console.log(`log hygiene (cas): ${secrets.size} secrets, ${lines.length} log lines, no leak`);
  });
});
