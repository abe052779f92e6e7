import { fileURLToPath } from 'node:url';
import { freePort, freshRedisPrefix, freshTestDatabase, sharedRedisUrl, startServiceProcess, type ServiceProcess } from '@collect/testing';
import { demoXForm } from './forms-fixtures.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const unescapeHtml = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** A cookie jar over fetch, enough for the /o/ login and consent pages. */
class Browser {
  private readonly jar = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(new URL(path, this.base), { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      this.jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }
  post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.go(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  }
}

function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) out[m[1]] = unescapeHtml(m[2]);
  return out;
}

/**
 * Drives the main flows of collect-api in a child process at LOG_LEVEL=trace with known secrets
 * (passwords, API and temporary tokens, OAuth client secret, authorization code, access and
 * refresh tokens) and asserts that none of them appears in any line it logged.
 * After the merge of rest services, add the messaging `auth_token` and a signing secret here.
 */
describe('hardening: log hygiene (collect-api)', () => {
  let proc: ServiceProcess;
  const secrets = new Map<string, string>();
  const keep = (name: string, value: unknown) => {
    expect(typeof value).toBe('string');
    expect((value as string).length).toBeGreaterThanOrEqual(8);
    secrets.set(name, value as string);
    return value as string;
  };

  beforeAll(async () => {
    const port = await freePort();
    proc = await startServiceProcess(MAIN, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'trace',
      COLLECT_PORT: String(port),
      COLLECT_HOST: '127.0.0.1',
      DATABASE_URL: await freshTestDatabase('collect_logs'),
      REDIS_URL: sharedRedisUrl(),
      REDIS_PREFIX: freshRedisPrefix('logs'),
      COLLECT_ADMIN_USERNAME: 'logadmin',
      COLLECT_ADMIN_PASSWORD: keep('admin password', 'Adm1n-pa55word-for-logs'),
      COLLECT_SECRET_KEY: keep('secret key', 'collect-secret-key-for-the-log-hygiene-test'),
    }, port);
  });
  afterAll(() => proc?.stop());

  it('never logs a password, token, client secret or code', async () => {
    const url = proc.url;
    const json = (path: string, auth: string | null, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
      fetch(`${url}${path}`, { method, headers: { ...(auth ? { Authorization: auth } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });

    const password = keep('user password', 'Us3r-pa55word-for-logs');
    expect((await json('/api/v1/profiles', null, { username: 'loguser', password, email: 'log@example.org' })).status).toBe(201);
    const me = (await (await json('/api/v1/user', basic('loguser', password))).json()) as { api_token: string; temp_token: string };
    keep('api token', me.api_token);
    keep('temp token', me.temp_token);
    expect((await json('/api/v1/user', `TempToken ${me.temp_token}`)).status).toBe(200);
    expect((await json('/api/v1/user', basic('loguser', keep('wrong password', 'Wr0ng-pa55word-for-logs')))).status).toBe(401);
    expect((await json('/api/v1/user', basic('logadmin', secrets.get('admin password')!))).status).toBe(200);
    const fresh = (await (await json('/api/v1/user/regenerate_auth_token', `Token ${me.api_token}`)).json()) as string;
    const token = `Token ${keep('regenerated api token', fresh)}`;
    expect((await json(`/api/v1/user?token=${me.api_token}&access_token=${fresh}`, token)).status).toBe(200);

    const formRes = await fetch(`${url}/api/v1/forms`, { method: 'POST', headers: { Authorization: token, 'content-type': 'application/xml' }, body: demoXForm('logs') });
    expect(formRes.status).toBe(201);
    expect((await json('/api/v1/submissions', token, { id: 'logs', submission: { name: 'x' } })).status).toBe(201);

    const app = (await (await json('/api/v1/oauth-applications', token, { name: 'logs', client_type: 'confidential', redirect_uris: 'https://client.example/cb' })).json()) as { client_id: string; client_secret: string };
    keep('client secret', app.client_secret);
    const browser = new Browser(url);
    const authorizePath = `/o/authorize?client_id=${app.client_id}&response_type=code&state=st&scope=read+write`;
    const login = hiddenFields(await (await browser.go(authorizePath)).text());
    expect((await browser.post('/o/login', { ...login, username: 'loguser', password })).status).toBe(303);
    const consent = hiddenFields(await (await browser.go(authorizePath)).text());
    const decided = await browser.post('/o/authorize', { ...consent, decision: 'allow' });
    const code = keep('authorization code', new URL(decided.headers.get('location')!).searchParams.get('code'));
    const exchange = (fields: Record<string, string>) =>
      fetch(`${url}/o/token`, { method: 'POST', headers: { Authorization: basic(app.client_id, app.client_secret), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    const tokens = (await (await exchange({ grant_type: 'authorization_code', code })).json()) as { access_token: string; refresh_token: string };
    keep('access token', tokens.access_token);
    keep('refresh token', tokens.refresh_token);
    expect((await json('/api/v1/user', `Bearer ${tokens.access_token}`)).status).toBe(200);
    const refreshed = (await (await exchange({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).json()) as { access_token: string; refresh_token: string };
    keep('refreshed access token', refreshed.access_token);
    keep('rotated refresh token', refreshed.refresh_token);
    // Reuse of the consumed refresh token and of the code: refusals are logged too.
    expect((await exchange({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status).toBe(400);
    expect((await exchange({ grant_type: 'authorization_code', code })).status).toBe(400);

    await proc.stop();
    const lines = proc.output().split('\n').filter(Boolean);
    // The capture works: requests and the failed login were logged.
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.some((l) => l.includes('/o/token'))).toBe(true);
    expect(lines.some((l) => l.includes('failed login'))).toBe(true);
    const leaks = [...secrets].flatMap(([name, value]) => lines.filter((l) => l.includes(value)).map((l) => `${name}: ${l.slice(0, 300)}`));
    expect(leaks).toEqual([]);
    console.log(`log hygiene (collect-api): ${secrets.size} secrets, ${lines.length} log lines, no leak`);
  });
});
