import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { freePort } from '@collect/testing';
import { generateSigningKey, signCompact } from '../../../libs/jwt-validation/src/testing/local-issuer.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('collect-api while the CAS is unreachable, and with CAS sign-in switched off', () => {
  let down: TestCollectApp;
  let off: TestCollectApp;
  let admin: TestUser;
  let issuer: string;

  beforeAll(async () => {
    issuer = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    down = await startTestCollectApp({ CAS_ISSUER: issuer });
    off = await startTestCollectApp({ CAS_SIGN_IN_ENABLED: 'false' });
    admin = await createTestUser(down.app, { superuser: true });
  });
  afterAll(async () => {
    await down?.close();
    await off?.close();
  });

  it('answers 503 with Retry-After to a CAS token it cannot check yet (not a 401 that would make clients drop it)', async () => {
    const key = generateSigningKey('k1');
    const now = Math.floor(Date.now() / 1000);
    const token = signCompact({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' }, { iss: issuer, aud: 'collect-api', sub: 'demo-machine', client_id: 'demo-machine', scope: 'read', iat: now, exp: now + 300, jti: randomUUID() }, key.privateKey);
    const res = await request(down.url).get('/api/v1/user').set('Authorization', `Bearer ${token}`).expect(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.detail).toMatch(/cannot be reached/);
  });

  it('answers 503 on on-boarding calls and the sign-in start, and still serves local logins', async () => {
    const search = await request(down.url).get('/api/v1/cas-users').set('Authorization', admin.token).expect(503);
    expect(search.headers['retry-after']).toBe('5');
    await request(down.url).post('/api/v1/cas-users').set('Authorization', admin.token).send({ cas_user_id: randomUUID() }).expect(503);
    const start = await request(down.url).get('/auth/login').expect(503);
    expect(start.text).toContain('cannot be reached');
    await request(down.url).get('/api/v1/user').set('Authorization', admin.basic).expect(200);
  });

  it('with CAS_SIGN_IN_ENABLED=false: no button, /auth/* answers 404', async () => {
    const page = await request(off.url).get('/login').expect(200);
    expect(page.text).not.toContain('Sign in with the central service');
    await request(off.url).get('/auth/login').expect(404);
    await request(off.url).get('/auth/callback?state=x&code=y').expect(404);
  });
});
