import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/**
 * Rate limits of the CAS against the spellings a client controls: its own X-Forwarded-For and
 * the letter case and encoding of the limited paths (docs/security.md, "Rate limits, quotas and
 * forwarding input").
 */
describe('security: cas rate limits hold whatever the client writes', () => {
  describe('default configuration (nothing in front)', () => {
    let cas: TestCasApp;
    beforeAll(async () => {
      cas = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED, RATE_LIMIT_LOGIN_PER_IP: '3' });
    });
    afterAll(() => cas?.close());

    it('a new X-Forwarded-For on every login post does not make a new client address: 429 after the limit', async () => {
      expect(cas.config.CAS_TRUSTED_PROXY_HOPS).toBe(0);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${cas.url}/interaction/some-uid/login`, { method: 'POST', headers: { 'X-Forwarded-For': `198.51.100.${i + 1}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=demo&password=x' });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 3)).not.toContain(429);
      expect(statuses.slice(3)).toEqual([429, 429, 429]);
    });
  });

  describe('letter-case and encoding variants of every rate-limited path', () => {
    let cas: TestCasApp;
    const LIMIT = 2;
    beforeAll(async () => {
      cas = await startTestCasApp({
        CAS_DEV_SEED_FILE: DEV_SEED,
        CAS_TRUSTED_PROXY_HOPS: '1',
        RATE_LIMIT_TOKEN_PER_IP: String(LIMIT),
        RATE_LIMIT_TOKEN_PER_CLIENT: '1000',
        RATE_LIMIT_LOGIN_PER_IP: String(LIMIT),
      });
    });
    afterAll(() => cas?.close());

    const variants = (path: string): string[] => {
      const last = path.lastIndexOf('/') + 1;
      const word = path.slice(last);
      return [
        path,
        path.slice(0, last) + word[0].toUpperCase() + word.slice(1),
        path.toUpperCase(),
        `${path.slice(0, last)}%${word.charCodeAt(0).toString(16)}${word.slice(1)}`,
        `${path.slice(0, last)}%${word.charCodeAt(0).toString(16).toUpperCase()}${word.slice(1).toUpperCase()}`,
        `${path.slice(0, last)}%25${word.charCodeAt(0).toString(16)}${word.slice(1)}`,
        path.replace(/\//g, '//'),
        `${path}/`,
        `${path}?a=1`,
      ];
    };
    const routes = [
      { name: 'token endpoint', path: '/connect/token', send: (url: string, ip: string) => fetch(url, { method: 'POST', headers: { 'X-Forwarded-For': ip, Authorization: basic('demo-machine', 'wrong'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' }) },
      { name: 'login form', path: '/interaction/some-uid/login', send: (url: string, ip: string) => fetch(url, { method: 'POST', headers: { 'X-Forwarded-For': ip, 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=demo&password=x' }) },
    ];
    const table = routes.flatMap((route, r) => variants(route.path).map((variant, v) => ({ route: route.name, variant, send: route.send, ip: `10.${r + 10}.${v}.1` })));

    it.each(table)('$route as $variant: 429 once the limit is spent', async ({ variant, send, ip }) => {
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 2; i++) statuses.push((await send(`${cas.url}${variant}`, ip)).status);
      expect(statuses.slice(0, LIMIT)).not.toContain(429);
      expect(statuses.slice(LIMIT)).toEqual([429, 429]);
    });

    it('the variants share one count with the canonical path', async () => {
      const [token] = routes;
      const spellings = variants(token.path);
      const statuses: number[] = [];
      for (const spelling of spellings.slice(0, LIMIT + 1)) statuses.push((await token.send(`${cas.url}${spelling}`, '10.99.0.1')).status);
      expect(statuses[LIMIT]).toBe(429);
    });
  });
});
