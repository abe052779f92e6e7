import { connect } from 'node:net';
import request from 'supertest';
import { freshRedisPrefix } from '@collect/testing';
import { validateInput } from '@collect/platform';
import { PageQueryDto, pageRequest } from '../src/submissions/pagination.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** Sends headers one line at a time and never finishes them; resolves with what the server said when it closed. */
function slowLoris(url: string, everyMs: number, maxLines: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    let lines = 0;
    const timer = setInterval(() => {
      if (++lines > maxLines) {
        clearInterval(timer);
        socket.destroy();
        reject(new Error(`the server kept a slow-loris connection open for ${maxLines} header lines`));
        return;
      }
      socket.write(`X-Slow-${lines}: x\r\n`);
    }, everyMs);
    socket.on('connect', () => socket.write('GET /api/v1 HTTP/1.1\r\nHost: x\r\n'));
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    });
  });
}

describe('hardening: abuse limits (collect-api)', () => {
  describe('with small limits', () => {
    let sut: TestCollectApp;
    let user: TestUser;

    beforeAll(async () => {
      sut = await startTestCollectApp({
        HTTP_BODY_LIMIT_BYTES: '4096',
        HTTP_HEADERS_TIMEOUT_MS: '400',
        SUBMISSION_XML_MAX_BYTES: '2048',
        ATTACHMENT_MAX_BYTES: '1024',
        SUBMISSION_MAX_ATTACHMENTS: '2',
        HTTP_TRUSTED_PROXY_HOPS: '1',
        RATE_LIMIT_TOKEN_PER_IP: '5',
        RATE_LIMIT_TOKEN_PER_CLIENT: '3',
        RATE_LIMIT_LOGIN_PER_IP: '4',
        RATE_LIMIT_LOGIN_PER_USERNAME: '2',
      });
      user = await createTestUser(sut.app);
    });
    afterAll(() => sut.close());

    it('JSON and form bodies over HTTP_BODY_LIMIT_BYTES: 413 {"detail"} (RFC 6749 shape at /o/token); under it: parsed', async () => {
      const big = { username: 'x', password: 'y'.repeat(5000), email: 'e@example.org' };
      const res = await request(sut.url).post('/api/v1/profiles').send(big).expect(413);
      expect(res.body).toEqual({ detail: 'Request body is too large.' });
      await request(sut.url).post('/api/v1/profiles').send({ ...big, password: 'y'.repeat(3000) }).expect(400);
      const token = await request(sut.url).post('/o/token').type('form').send({ grant_type: 'refresh_token', refresh_token: 'r'.repeat(5000) }).expect(413);
      expect(token.body).toEqual({ error: 'invalid_request', error_description: 'Request body is too large.' });
    });

    it('OpenRosa limits by configuration: XML part, attachment size, attachment count: 413, nothing stored', async () => {
      await request(sut.url).post('/api/v1/forms').set('Authorization', user.token).set('Content-Type', 'application/xml').send(demoXForm('limits')).expect(201);
      const xml = demoInstance({ instanceId: 'l1', idString: 'limits' });
      const post = () => request(sut.url).post('/submission').set('Authorization', user.token).set('X-OpenRosa-Version', '1.0');
      expect((await post().attach('xml_submission_file', Buffer.from(xml + ' '.repeat(3000)), 'submission.xml')).status).toBe(413);
      expect((await post().attach('xml_submission_file', Buffer.from(xml), 'submission.xml').attach('photo', Buffer.alloc(2000, 1), 'house.jpg')).status).toBe(413);
      const three = post().attach('xml_submission_file', Buffer.from(xml), 'submission.xml');
      for (const name of ['a.jpg', 'b.jpg', 'c.jpg']) three.attach(name, Buffer.alloc(10, 1), name);
      expect((await three).status).toBe(413);
      const data = await request(sut.url).get('/api/v1/forms').set('Authorization', user.token).expect(200);
      expect(data.body[0].num_of_submissions ?? 0).toBe(0);
    });

    it('a request header block over 16 KB: 431', async () => {
      const res = await fetch(`${sut.url}/api/v1`, { headers: { 'X-Big': 'x'.repeat(20_000) } });
      expect(res.status).toBe(431);
    });

    it('a slow-loris client is answered 408 and disconnected after HTTP_HEADERS_TIMEOUT_MS', async () => {
      const answer = await slowLoris(sut.url, 100, 200);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    });

    it('page_size: capped at 10000, non-numbers and 10-digit values are 400', async () => {
      const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', user.token).set('Content-Type', 'application/xml').send(demoXForm('paging')).expect(201)).body.formid;
      await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).send({ id: 'paging', submission: { name: 'a' } }).expect(201);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).send({ id: 'paging', submission: { name: 'b' } }).expect(201);
      // page 1 of size 1 links to page 2 with the size asked; a huge size is clamped, so no next page.
      expect((await request(sut.url).get(`/api/v1/data/${formId}?page_size=1`).set('Authorization', user.token).expect(200)).headers.link).toContain('page_size=1');
      const huge = await request(sut.url).get(`/api/v1/data/${formId}?page_size=999999999`).set('Authorization', user.token).expect(200);
      expect(huge.body).toHaveLength(2);
      expect(pageRequest(await validateInput(PageQueryDto, { page_size: '999999999' })).pageSize).toBe(10_000);
      await request(sut.url).get(`/api/v1/data/${formId}?page_size=1000000000`).set('Authorization', user.token).expect(400);
      await request(sut.url).get(`/api/v1/data/${formId}?page_size=-5`).set('Authorization', user.token).expect(400);
    });

    it('POST /o/token: per client and per address limits, 429 slow_down with Retry-After', async () => {
      const client = (id: string) => `Basic ${Buffer.from(`${id}:secret`).toString('base64')}`;
      const token = (id: string, ip: string) => request(sut.url).post('/o/token').set('X-Forwarded-For', ip).set('Authorization', client(id)).type('form').send({ grant_type: 'refresh_token', refresh_token: 'x' });
      for (let i = 0; i < 3; i++) expect((await token('client-a', `10.0.0.${i + 1}`)).status).toBe(401);
      const limited = await token('client-a', '10.0.0.9');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.body).toEqual({ error: 'slow_down', error_description: expect.any(String) });
      // Per address: 5 from one address whatever the client.
      for (let i = 0; i < 5; i++) expect((await token(`client-${i}b`, '10.0.1.1')).status).toBe(401);
      expect((await token('client-z', '10.0.1.1')).status).toBe(429);
      expect((await token('client-z', '10.0.1.2')).status).toBe(401);
    });

    it('POST /o/login: per username and per address limits', async () => {
      const login = (username: string, ip: string) => request(sut.url).post('/o/login').set('X-Forwarded-For', ip).type('form').send({ username, password: 'x', csrf_token: 'x', next: '/o/authorize?' });
      expect((await login('eve', '10.1.0.1')).status).toBe(403);
      expect((await login('EVE', '10.1.0.2')).status).toBe(403);
      const limited = await login('eve', '10.1.0.3');
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBeDefined();
      for (let i = 0; i < 4; i++) expect((await login(`u${i}`, '10.1.1.1')).status).toBe(403);
      expect((await login('u9', '10.1.1.1')).status).toBe(429);
    });

    it('per address means the address the ingress saw: a client-written left-most X-Forwarded-For changes nothing', async () => {
      // The ingress appends the peer it saw (10.1.2.1) to whatever the client sent.
      const login = (i: number) => request(sut.url).post('/o/login').set('X-Forwarded-For', `198.51.100.${i}, 10.1.2.1`).type('form').send({ username: `v${i}`, password: 'x', csrf_token: 'x', next: '/o/authorize?' });
      for (let i = 0; i < 4; i++) expect((await login(i)).status).toBe(403);
      expect((await login(9)).status).toBe(429);
    });

    it('HTML pages carry helmet headers and their own strict CSP', async () => {
      const res = await request(sut.url).get('/o/authorize?client_id=nope&response_type=code');
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'strict-transport-security': expect.stringContaining('max-age='),
        'cross-origin-opener-policy': 'same-origin',
        'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
      });
      expect(res.headers['x-powered-by']).toBeUndefined();
    });
  });

  it('rate limits hold across replicas: two apps on one Redis share the counts', async () => {
    const prefix = freshRedisPrefix('shared');
    const env = { REDIS_PREFIX: prefix, RATE_LIMIT_TOKEN_PER_CLIENT: '3' };
    const [a, b] = [await startTestCollectApp(env), await startTestCollectApp(env)];
    try {
      const token = (sut: TestCollectApp) => request(sut.url).post('/o/token').auth('shared-client', 'x').type('form').send({ grant_type: 'refresh_token', refresh_token: 'x' });
      expect([(await token(a)).status, (await token(b)).status, (await token(a)).status]).toEqual([401, 401, 401]);
      expect((await token(b)).status).toBe(429);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the default JSON limit is 1 MiB', async () => {
    const sut = await startTestCollectApp();
    try {
      const body = (n: number) => ({ username: 'x', password: 'y'.repeat(n), email: 'e@example.org' });
      await request(sut.url).post('/api/v1/profiles').send(body(1_100_000)).expect(413);
      await request(sut.url).post('/api/v1/profiles').send(body(900_000)).expect(400);
    } finally {
      await sut.close();
    }
  });
});
