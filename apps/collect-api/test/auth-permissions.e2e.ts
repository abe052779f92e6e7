import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestBearerToken, createTestUser, type TestUser } from './test-users.js';

type Caller = 'anonymous' | 'owner' | 'stranger' | 'admin' | 'bearer-rw' | 'bearer-read' | 'owner-basic';

/**
 * Every endpoint of the auth, users, profiles and oauth2 modules × every kind of caller:
 * anonymous, the owner (Token and Basic), a stranger, a platform admin, and the owner through
 * a Bearer token with `read write` and with `read` only.
 */
describe('collect-api auth permissions matrix', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let stranger: TestUser;
  let admin: TestUser;
  const auth: Partial<Record<Caller, string>> = {};
  let appId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '0' });
    owner = await createTestUser(sut.app, { username: 'owner' });
    stranger = await createTestUser(sut.app, { username: 'stranger' });
    admin = await createTestUser(sut.app, { username: 'root', superuser: true });
    Object.assign(auth, {
      owner: owner.token,
      'owner-basic': owner.basic,
      stranger: stranger.token,
      admin: admin.token,
      'bearer-rw': await createTestBearerToken(sut.app, owner),
      'bearer-read': await createTestBearerToken(sut.app, owner, 'read'),
    });
    appId = (await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', owner.token).send({ name: 'mine', redirect_uris: 'https://c.example/cb' }).expect(201)).body.id;
  });
  afterAll(() => sut.close());

  function call(caller: Caller, method: 'get' | 'post' | 'delete', path: string, body?: object) {
    const req = request(sut.url)[method](path);
    if (auth[caller]) req.set('Authorization', auth[caller]!);
    return body ? req.send(body) : req;
  }

  const readMatrix: Array<[string, Record<Caller, number>]> = [
    ['/api/v1/user', { anonymous: 401, owner: 200, 'owner-basic': 200, stranger: 200, admin: 200, 'bearer-rw': 200, 'bearer-read': 200 }],
    ['/api/v1/users/owner', { anonymous: 401, owner: 200, 'owner-basic': 200, stranger: 200, admin: 200, 'bearer-rw': 200, 'bearer-read': 200 }],
    ['/api/v1/profiles/owner', { anonymous: 200, owner: 200, 'owner-basic': 200, stranger: 200, admin: 200, 'bearer-rw': 200, 'bearer-read': 200 }],
    ['/api/v1/oauth-applications', { anonymous: 401, owner: 200, 'owner-basic': 200, stranger: 200, admin: 200, 'bearer-rw': 200, 'bearer-read': 200 }],
    ['/api/v1/oauth-applications/:id', { anonymous: 401, owner: 200, 'owner-basic': 200, stranger: 404, admin: 200, 'bearer-rw': 200, 'bearer-read': 200 }],
    ['/api/v1/', { anonymous: 200, owner: 200, 'owner-basic': 200, stranger: 200, admin: 200, 'bearer-rw': 200, 'bearer-read': 200 }],
  ];
  for (const [path, expected] of readMatrix) {
    for (const [caller, status] of Object.entries(expected) as Array<[Caller, number]>) {
      it(`GET ${path} as ${caller}: ${status}`, async () => {
        await call(caller, 'get', path.replace(':id', String(appId))).expect(status);
      });
    }
  }

  it('the credential rule: a read-only Bearer token cannot read api_token/temp_token and so cannot buy write access', async () => {
    const fresh = await createTestUser(sut.app);
    const read = await createTestBearerToken(sut.app, fresh, 'read');
    const rw = await createTestBearerToken(sut.app, fresh);
    await request(sut.url).post('/api/v1/forms').set('Authorization', read).send({ id_string: 'x', title: 'x', fields: [{ name: 'q', type: 'text' }] }).expect(403);
    for (const bearer of [read, rw]) {
      const me = await request(sut.url).get('/api/v1/user').set('Authorization', bearer).expect(200);
      expect(me.body).toMatchObject({ username: fresh.username, email: fresh.email });
      expect(me.body).not.toHaveProperty('api_token');
      expect(me.body).not.toHaveProperty('temp_token');
      expect(me.text).not.toContain(fresh.apiToken);
    }
    // Nor is a temporary token minted for a Bearer caller.
    const rows = await sut.app.get(DataSource).query(`SELECT 1 FROM temp_tokens WHERE user_id = $1`, [fresh.id]);
    expect(rows).toEqual([]);
    // Basic, Token and TempToken keep both keys.
    const viaBasic = await request(sut.url).get('/api/v1/user').set('Authorization', fresh.basic).expect(200);
    expect(viaBasic.body).toMatchObject({ api_token: fresh.apiToken, temp_token: expect.stringMatching(/^[0-9a-f]{40}$/) });
    for (const header of [fresh.token, `TempToken ${viaBasic.body.temp_token}`]) {
      expect((await request(sut.url).get('/api/v1/user').set('Authorization', header).expect(200)).body).toMatchObject({ api_token: fresh.apiToken, temp_token: viaBasic.body.temp_token });
    }
  });

  it('the owner sees their own email on /api/v1/user; nobody sees another user’s tokens', async () => {
    const mine = await call('stranger', 'get', '/api/v1/user').expect(200);
    expect(mine.body.username).toBe('stranger');
    expect(mine.body.api_token).toBe(stranger.apiToken);
  });

  it('POST /api/v1/oauth-applications: 401 anonymous, 403 any Bearer token (a client secret is a credential), 201 otherwise', async () => {
    const body = { name: 'x', redirect_uris: 'https://c.example/cb' };
    const expected: Record<Caller, number> = { anonymous: 401, owner: 201, 'owner-basic': 201, stranger: 201, admin: 201, 'bearer-rw': 403, 'bearer-read': 403 };
    for (const [caller, status] of Object.entries(expected) as Array<[Caller, number]>) {
      await call(caller, 'post', '/api/v1/oauth-applications', body).expect(status);
    }
  });

  it('POST /api/v1/profiles: open registration for anyone but read-only Bearer tokens', async () => {
    const expected: Record<Caller, number> = { anonymous: 201, owner: 201, 'owner-basic': 201, stranger: 201, admin: 201, 'bearer-rw': 201, 'bearer-read': 403 };
    let n = 0;
    for (const [caller, status] of Object.entries(expected) as Array<[Caller, number]>) {
      await call(caller, 'post', '/api/v1/profiles', { username: `reg${++n}`, password: 'registered-pw', email: `r${n}@example.org` }).expect(status);
    }
  });

  it('DELETE /api/v1/user/expire: Basic only', async () => {
    await call('owner-basic', 'get', '/api/v1/user').expect(200); // creates the temp token
    const expected: Record<Caller, number> = { anonymous: 401, owner: 401, stranger: 401, admin: 401, 'bearer-rw': 401, 'bearer-read': 401, 'owner-basic': 204 };
    for (const [caller, status] of Object.entries(expected) as Array<[Caller, number]>) {
      await call(caller, 'delete', '/api/v1/user/expire').expect(status);
    }
  });

  it('GET /api/v1/user/regenerate_auth_token: any user, never through a Bearer token', async () => {
    await call('anonymous', 'get', '/api/v1/user/regenerate_auth_token').expect(401);
    await call('bearer-read', 'get', '/api/v1/user/regenerate_auth_token').expect(403);
    const refused = await call('bearer-rw', 'get', '/api/v1/user/regenerate_auth_token').expect(403);
    expect(refused.body).toEqual({ detail: 'An access token cannot reveal or create credentials; use Basic, Token or TempToken authentication.' });
    await call('owner-basic', 'get', '/api/v1/user').expect(200, /"api_token":"[0-9a-f]{40}"/);
    const fresh = await createTestUser(sut.app);
    await request(sut.url).get('/api/v1/user/regenerate_auth_token').set('Authorization', fresh.token).expect(201);
  });

  it('DELETE /api/v1/oauth-applications/:id: 401 anonymous, 404 stranger, 403 read-only Bearer, 204 owner', async () => {
    const path = `/api/v1/oauth-applications/${appId}`;
    await call('anonymous', 'delete', path).expect(401);
    await call('stranger', 'delete', path).expect(404);
    await call('bearer-read', 'delete', path).expect(403);
    await call('owner-basic', 'delete', path).expect(204);
    await call('owner-basic', 'delete', path).expect(404);
  });

  it('an admin may delete anyone’s application', async () => {
    const id = (await call('stranger', 'post', '/api/v1/oauth-applications', { name: 's', redirect_uris: 'https://c.example/cb' }).expect(201)).body.id;
    await call('admin', 'delete', `/api/v1/oauth-applications/${id}`).expect(204);
  });
});
