import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';

/** One case per 500 that fuzzing (hardening-fuzz.e2e.ts) found, replayed by hand. */
describe('hardening: regressions found by fuzzing (collect-api)', () => {
  let sut: TestCollectApp;

  beforeAll(async () => {
    sut = await startTestCollectApp();
  });
  afterAll(() => sut.close());

  it('POST /o/login and /o/authorize with a non-form body: 403 page (CSRF), not 500', async () => {
    for (const path of ['/o/login', '/o/authorize']) {
      const res = await request(sut.url).post(path).set('Content-Type', 'multipart/form-data').send('ä\u0016û`èX\u000eO');
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    }
  });

  it('a multipart body cut inside a file part: 400, and the process stays up (was an uncaught busboy error)', async () => {
    const { createTestUser } = await import('./test-users.js');
    const user = await createTestUser(sut.app);
    const cut = '--b\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="a.xml"\r\n\r\n<data id="x">';
    for (const path of ['/api/v1/submissions', '/submission', '/api/v1/forms']) {
      const part = path === '/api/v1/forms' ? cut.replace('xml_submission_file', 'xml_file') : cut;
      const res = await request(sut.url).post(path).set('Authorization', user.token).set('Content-Type', 'multipart/form-data; boundary=b').send(part);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: expect.stringContaining('Malformed multipart body') });
    }
    await request(sut.url).get('/api/v1/').expect(200);
  });

  it('POST /o/token with a body the parser refuses: RFC 6749 invalid_request, not {"detail"}', async () => {
    const res = await request(sut.url).post('/o/token').set('Content-Type', 'application/json; charset=utf-16').send('{}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });
});
