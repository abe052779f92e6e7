import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** /metrics behind METRICS_TOKEN: the Ingress exposes every path of the API host. */
describe('/metrics with METRICS_TOKEN', () => {
  const scrapeToken = 'scrape-token-0123456789abcdef';
  let sut: TestCollectApp;
  let admin: TestUser;

  beforeAll(async () => {
    sut = await startTestCollectApp({ METRICS_TOKEN: scrapeToken });
    admin = await createTestUser(sut.app, { superuser: true });
  });
  afterAll(() => sut?.close());

  it('answers the scraper that sends the token', async () => {
    const res = await request(sut.url).get('/metrics').set('Authorization', `Bearer ${scrapeToken}`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('# TYPE collect_restservice_deliveries_total counter');
  });

  it.each([
    ['no credentials', undefined],
    ['a wrong token', 'Bearer scrape-token-0123456789abcdeX'],
    ['a prefix of the token', 'Bearer scrape-token'],
    ['the token without the Bearer scheme', scrapeToken],
  ])('refuses %s with 401 and WWW-Authenticate', async (_label, header) => {
    const req = request(sut.url).get('/metrics');
    const res = await (header ? req.set('Authorization', header) : req).expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(res.body).toEqual({ detail: expect.any(String) });
    expect(res.text).not.toContain('collect_restservice');
  });

  it("refuses a platform admin's own credentials (the scrape token is the only key)", async () => {
    await request(sut.url).get('/metrics').set('Authorization', admin.token).expect(401);
    await request(sut.url).get('/metrics').set('Authorization', admin.basic).expect(401);
  });
});

describe('/metrics without METRICS_TOKEN in production', () => {
  let sut: TestCollectApp;
  beforeAll(async () => {
    sut = await startTestCollectApp({ NODE_ENV: 'production', COLLECT_SECRET_KEY: 'k'.repeat(40), CAS_ISSUER: 'https://auth.example.org', COLLECT_ADMIN_USERNAME: 'root', COLLECT_ADMIN_PASSWORD: 'root-password-long-enough' });
  });
  afterAll(() => sut?.close());

  it('is not served (404), whoever asks', async () => {
    await request(sut.url).get('/metrics').expect(404);
    await request(sut.url).get('/metrics').set('Authorization', 'Bearer anything-at-all-here').expect(404);
  });
});
