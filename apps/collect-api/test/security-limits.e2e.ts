import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser } from './test-users.js';

/**
 * Rate limits of collect-api against the spellings a client controls: its own X-Forwarded-For
 * and the letter case and encoding of the limited paths (docs/security.md, "Rate limits, quotas
 * and forwarding input").
 */
describe('security: collect-api rate limits hold whatever the client writes', () => {
  describe('default configuration (nothing in front)', () => {
    let sut: TestCollectApp;
    beforeAll(async () => {
      sut = await startTestCollectApp({ RATE_LIMIT_AUTH_FAILURES_PER_IP: '3', RATE_LIMIT_LOGIN_PER_IP: '3' });
    });
    afterAll(() => sut?.close());

    it('a new X-Forwarded-For on every failed Basic login does not make a new client address: 429 after the limit', async () => {
      expect(sut.config.HTTP_TRUSTED_PROXY_HOPS).toBe(0);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await request(sut.url).get('/api/v1/forms').set('X-Forwarded-For', `198.51.100.${i + 1}`).auth(`nobody-${i}`, 'wrong');
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses.slice(3)).toEqual([429, 429, 429]);
    });

    it('the same for the login form', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await request(sut.url).post('/o/login').set('X-Forwarded-For', `203.0.113.${i + 1}`).type('form').send({ username: `w${i}`, password: 'x', csrf_token: 'x', next: '/o/authorize?' });
        statuses.push(res.status);
      }
      expect(statuses.slice(3)).toEqual([429, 429]);
    });
  });

  describe('which limit refused a Basic client', () => {
    let sut: TestCollectApp;
    beforeAll(async () => {
      sut = await startTestCollectApp({ RATE_LIMIT_BASIC_PER_USERNAME: '3' });
    });
    afterAll(() => sut?.close());

    it('past RATE_LIMIT_BASIC_PER_USERNAME with every login right: 429 that names the request limit and the token way round it, with Retry-After', async () => {
      const user = await createTestUser(sut.app);
      for (let i = 0; i < 3; i++) await request(sut.url).get('/api/v1/user').set('Authorization', user.basic).expect(200);
      const limited = await request(sut.url).get('/api/v1/user').set('Authorization', user.basic).expect(429);
      expect(limited.body.detail).toMatch(/Too many Basic-authenticated requests for this username, successful ones included/);
      expect(limited.body.detail).toMatch(/token/i);
      expect(limited.body.detail).not.toMatch(/failed login/);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // As it says: the token is not counted by that limit.
      await request(sut.url).get('/api/v1/user').set('Authorization', user.token).expect(200);
    });
  });

  describe('letter-case and encoding variants of every rate-limited path', () => {
    let sut: TestCollectApp;
    const LIMIT = 2;
    beforeAll(async () => {
      sut = await startTestCollectApp({
        HTTP_TRUSTED_PROXY_HOPS: '1',
        RATE_LIMIT_TOKEN_PER_IP: String(LIMIT),
        RATE_LIMIT_TOKEN_PER_CLIENT: '1000',
        RATE_LIMIT_LOGIN_PER_IP: String(LIMIT),
        RATE_LIMIT_LOGIN_PER_USERNAME: '1000',
        RATE_LIMIT_AUTH_FAILURES_PER_IP: '1000',
      });
    });
    afterAll(() => sut?.close());

    const variants = (path: string): string[] => {
      const last = path.lastIndexOf('/') + 1;
      const word = path.slice(last);
      const hex = word.charCodeAt(0).toString(16);
      return [
        path,
        path.slice(0, last) + word[0].toUpperCase() + word.slice(1),
        path.toUpperCase(),
        `${path.slice(0, last)}%${hex}${word.slice(1)}`,
        `${path.slice(0, last)}%${hex.toUpperCase()}${word.slice(1).toUpperCase()}`,
        `${path.slice(0, last)}%25${hex}${word.slice(1)}`,
        path.replace(/\//g, '//'),
        `${path}/`,
        `${path}?a=1`,
      ];
    };
    const routes = [
      { name: 'POST /o/token', path: '/o/token', send: (url: string, ip: string) => request(url).post('').set('X-Forwarded-For', ip).auth('client-x', 'wrong').type('form').send({ grant_type: 'refresh_token', refresh_token: 'x' }) },
      { name: 'POST /o/login', path: '/o/login', send: (url: string, ip: string) => request(url).post('').set('X-Forwarded-For', ip).type('form').send({ username: 'someone', password: 'x', csrf_token: 'x', next: '/o/authorize?' }) },
    ];
    const table = routes.flatMap((route, r) => variants(route.path).map((variant, v) => ({ route: route.name, variant, send: route.send, ip: `10.${r + 10}.${v}.1` })));

    // A spelling the router does not serve answers 404 and checks no secret; every spelling it
    // serves must be counted with the route, so past the limit nothing reaches the endpoint.
    it.each(table)('$route as $variant: nothing reaches the endpoint past the limit', async ({ variant, send, ip }) => {
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 2; i++) statuses.push((await send(`${sut.url}${variant}`, ip)).status);
      if (statuses.every((s) => s === 404)) return;
      expect(statuses.slice(0, LIMIT)).not.toContain(429);
      expect(statuses.slice(LIMIT)).toEqual([429, 429]);
    });

    it('the case variants are served by the router (so the table above tests a real bypass)', async () => {
      for (const [path, ip] of [['/o/Token', '10.50.0.1'], ['/O/LOGIN', '10.50.0.2']]) {
        const status = (await request(`${sut.url}${path}`).post('').set('X-Forwarded-For', ip).type('form').send({})).status;
        expect(status).not.toBe(404);
      }
    });
  });
});
