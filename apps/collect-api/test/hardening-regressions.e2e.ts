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

  it('NUL in a JSON body, a query string, an OpenRosa answer or Basic credentials: 400/401, not 500', async () => {
    const { createTestUser, basicHeader } = await import('./test-users.js');
    const { demoInstance, demoXForm } = await import('./forms-fixtures.js');
    const user = await createTestUser(sut.app);
    await request(sut.url).post('/api/v1/forms').set('Authorization', user.token).set('Content-Type', 'application/xml').send(demoXForm()).expect(201);
    const json = await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).send({ id: 'household_survey', submission: { name: 'a\u0000b' } });
    expect(json.status).toBe(400);
    expect(json.body).toEqual({ detail: expect.stringContaining('NUL') });
    // The same escape in a key; a UTF-16 body (whose bytes would not show the escape) is refused too.
    const inKey = await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).send({ id: 'household_survey', submission: { ['na\u0000me']: 'x' } });
    expect(inKey.status).toBe(400);
    const utf16 = await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).set('Content-Type', 'application/json; charset=utf-16le')
      .send(Buffer.from(JSON.stringify({ id: 'household_survey', submission: { name: 'a\u0000b' } }), 'utf16le'));
    expect(utf16.status).toBe(400);
    // The escape's text without a NUL (an escaped backslash) is an answer like any other.
    const text = await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).send({ id: 'household_survey', submission: { name: 'a\\u0000b' } });
    expect(text.status).toBe(201);
    await request(sut.url).get('/api/v1/users/a%00b').set('Authorization', user.token).expect(400);
    const xml = demoInstance({ instanceId: 'nul-1', name: 'YK\u0000YK' });
    const openRosa = await request(sut.url).post('/api/v1/submissions').set('Authorization', user.token).attach('xml_submission_file', Buffer.from(xml), 'submission.xml');
    expect(openRosa.status).toBe(400);
    expect(openRosa.body).toEqual({ xml_submission_file: [expect.stringContaining('control characters')] });
    await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('a\u0000b', 'pw')).expect(401);
    await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader(user.username, 'pw\u0000')).expect(401);
  });

  it('a multipart body with a field part then an XML part cut short: 400 in time (was a hang after the first fix)', async () => {
    const { createTestUser } = await import('./test-users.js');
    const { demoInstance, demoXForm } = await import('./forms-fixtures.js');
    const { encodeBody, sendFuzzRequest } = await import('@collect/testing');
    const user = await createTestUser(sut.app);
    await request(sut.url).post('/api/v1/forms').set('Authorization', user.token).set('Content-Type', 'application/xml').send(demoXForm('cut_short')).expect(201);
    const body = {
      kind: 'multipart' as const,
      boundary: '----WebKitFormBoundary7MA4YWxkTrZu0gW',
      parts: [
        { name: 'xW^&\u0000xW^&', contentType: 'image/jpeg', data: ';±I3ý©' },
        { name: 'xml_submission_file', filename: 'é.jpg', contentType: 'text/xml', data: demoInstance({ instanceId: 'cut-1', idString: 'cut_short' }) },
        { name: 'xml_submission_file', filename: '', contentType: 'image/jpeg', data: `<data id="${'x'.repeat(5000)}">` },
      ],
      truncate: 346,
    };
    expect(encodeBody(body).payload!.length).toBeGreaterThan(300);
    for (const path of ['/api/v1/submissions', '/submission']) {
      const answer = await sendFuzzRequest(sut.url, 'POST', path, { body }, { Authorization: user.token }, 10_000);
      expect(answer.status).toBe(400);
    }
  });

  it('POST /o/token with a body the parser refuses: RFC 6749 invalid_request, not {"detail"}', async () => {
    const res = await request(sut.url).post('/o/token').set('Content-Type', 'application/json; charset=utf-16').send('{}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });
});
