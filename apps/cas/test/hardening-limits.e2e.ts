import { connect } from 'node:net';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('hardening: abuse limits (cas)', () => {
  let cas: TestCasApp;

  beforeAll(async () => {
    cas = await startTestCasApp({
      CAS_DEV_SEED_FILE: DEV_SEED,
      CAS_TRUSTED_PROXY_HOPS: '1',
      HTTP_BODY_LIMIT_BYTES: '4096',
      HTTP_HEADERS_TIMEOUT_MS: '400',
      RATE_LIMIT_TOKEN_PER_IP: '5',
      RATE_LIMIT_TOKEN_PER_CLIENT: '3',
      RATE_LIMIT_LOGIN_PER_IP: '3',
    });
  });
  afterAll(() => cas?.close());

  const token = (ip: string, auth: string) =>
    fetch(`${cas.url}/connect/token`, { method: 'POST', headers: { 'X-Forwarded-For': ip, Authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=read' });

  it('POST /connect/token: per client (Basic) and per address, 429 slow_down with Retry-After', async () => {
    for (let i = 0; i < 3; i++) expect((await token(`10.0.0.${i}`, basic('demo-machine', 'demo-machine-secret'))).status).toBe(200);
    const limited = await token('10.0.0.9', basic('demo-machine', 'demo-machine-secret'));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.json()).toEqual({ error: 'slow_down', error_description: expect.any(String) });
    for (let i = 0; i < 5; i++) expect((await token('10.0.1.1', basic(`nobody-${i}`, 'x'))).status).toBe(401);
    expect((await token('10.0.1.1', basic('nobody-9', 'x'))).status).toBe(429);
    expect((await token('10.0.1.2', basic('nobody-9', 'x'))).status).toBe(401);
  });

  it('login form posts per address: 429 page after the limit', async () => {
    const post = () => fetch(`${cas.url}/interaction/some-uid/login`, { method: 'POST', headers: { 'X-Forwarded-For': '10.2.0.1', 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=demo&password=x' });
    for (let i = 0; i < 3; i++) expect((await post()).status).not.toBe(429);
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
    expect(limited.headers.get('retry-after')).toBeTruthy();
  });

  it('per address means the address the ingress saw: a client-written left-most X-Forwarded-For changes nothing', async () => {
    const post = (i: number) => fetch(`${cas.url}/interaction/some-uid/login`, { method: 'POST', headers: { 'X-Forwarded-For': `198.51.100.${i}, 10.2.5.1`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=demo&password=x' });
    for (let i = 0; i < 3; i++) expect((await post(i)).status).not.toBe(429);
    expect((await post(9)).status).toBe(429);
  });

  it('security headers on provider pages, interaction pages and the API; no x-powered-by', async () => {
    const authorize = await fetch(`${cas.url}/connect/authorize?client_id=nope&response_type=code`, { redirect: 'manual' });
    const interaction = await fetch(`${cas.url}/interaction/unknown-uid`, { redirect: 'manual' });
    const api = await fetch(`${cas.url}/api/users`);
    for (const res of [authorize, interaction, api]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('strict-transport-security')).toContain('max-age=');
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
    expect(interaction.headers.get('content-type')).toMatch(/^text\/html/);
    expect(interaction.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('a body over HTTP_BODY_LIMIT_BYTES on the login page: 413 {"detail"}', async () => {
    const res = await fetch(`${cas.url}/interaction/uid/login`, { method: 'POST', headers: { 'X-Forwarded-For': '10.3.0.1', 'content-type': 'application/x-www-form-urlencoded' }, body: `username=demo&password=${'x'.repeat(5000)}` });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: 'Request body is too large.' });
  });

  it('a header block over 16 KB: 431; a slow-loris client: 408 and disconnected', async () => {
    expect((await fetch(`${cas.url}/.well-known/openid-configuration`, { headers: { 'X-Big': 'x'.repeat(20_000) } })).status).toBe(431);
    const { port } = new URL(cas.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let out = '';
      let lines = 0;
      const timer = setInterval(() => {
        if (++lines > 200) {
          clearInterval(timer);
          socket.destroy();
          reject(new Error('slow-loris connection kept open'));
        } else socket.write(`X-Slow-${lines}: x\r\n`);
      }, 100);
      socket.on('connect', () => socket.write('GET /connect/token HTTP/1.1\r\nHost: x\r\n'));
      socket.on('data', (d) => (out += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve(out);
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('hardening: cas rate limits across replicas', () => {
  it('two CAS processes on one database share the token counts', async () => {
    const { freshTestDatabase } = await import('@collect/testing');
    const db = await freshTestDatabase('cas_replicas');
    const env = { CAS_DEV_SEED_FILE: DEV_SEED, CAS_DATABASE_URL: db, RATE_LIMIT_TOKEN_PER_CLIENT: '3', RATE_LIMIT_SYNC_MS: '50' };
    const a = await startTestCasApp(env);
    const b = await startTestCasApp(env);
    try {
      const token = (sut: TestCasApp) =>
        fetch(`${sut.url}/connect/token`, { method: 'POST', headers: { Authorization: basic('demo-machine', 'demo-machine-secret'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=read' });
      for (let i = 0; i < 3; i++) expect((await token(a)).status).toBe(200);
      // A adds its counts to the shared table in batches (RATE_LIMIT_SYNC_MS).
      const { DataSource } = await import('typeorm');
      const { waitFor } = await import('@collect/testing');
      await waitFor(async () => {
        const rows: Array<{ hits: number }> = await a.app.get(DataSource).query(`SELECT hits FROM cas_rate_limits WHERE key = 'token-client:demo-machine'`);
        return rows[0]?.hits === 3;
      }, 10_000, 'replica A to share its counts');
      // Replica B has not counted this client yet: its first hit reads the shared count (3 + 1).
      expect((await token(b)).status).toBe(429);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
