import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { basicHeader, createTestBearerToken, createTestUser, type TestUser } from './test-users.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('collect-api authentication (Basic, Token, TempToken, Bearer)', () => {
  let sut: TestCollectApp;
  let alice: TestUser;

  beforeAll(async () => {
    sut = await startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '0' });
    alice = await createTestUser(sut.app, { username: 'alice', firstName: 'Alice', lastName: 'Liddell' });
  });
  afterAll(() => sut.close());

  describe('no credentials', () => {
    it('answers 401 with WWW-Authenticate on an endpoint that needs a user', async () => {
      const res = await request(sut.url).get('/api/v1/user').expect(401);
      expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
      expect(res.headers['www-authenticate']).toBe('Basic realm="api"');
    });

    it('lets an anonymous caller reach a public endpoint', async () => {
      await request(sut.url).get('/api/v1/').expect(200);
    });

    it('treats an unknown scheme as no credentials', async () => {
      await request(sut.url).get('/api/v1/').set('Authorization', 'Digest abc').expect(200);
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', 'Digest abc').expect(401);
      expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
    });

    it('answers an unknown route 404 whatever the credentials', async () => {
      await request(sut.url).get('/api/v1/nothing-here').expect(404, { detail: 'Not found.' });
      await request(sut.url).get('/api/v1/nothing-here').set('Authorization', alice.token).expect(404, { detail: 'Not found.' });
    });
  });

  describe('Basic', () => {
    it('returns the profile with api_token and temp_token', async () => {
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', alice.basic).expect(200);
      expect(res.body).toMatchObject({
        username: 'alice',
        name: 'Alice Liddell',
        email: 'alice@example.org',
        url: expect.stringMatching(/\/api\/v1\/profiles\/alice$/),
        user: expect.stringMatching(/\/api\/v1\/users\/alice$/),
        gravatar: expect.stringContaining('gravatar.com'),
        require_auth: false,
        api_token: alice.apiToken,
        temp_token: expect.stringMatching(/^[0-9a-f]{40}$/),
      });
      for (const key of ['city', 'country', 'organization', 'website', 'twitter']) expect(res.body).toHaveProperty(key);
    });

    it('rejects a wrong password with 401', async () => {
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('alice', 'nope')).expect(401);
      expect(res.body).toEqual({ detail: 'Invalid username/password.' });
      expect(res.headers['www-authenticate']).toBe('Basic realm="api"');
    });

    it('rejects an unknown user and bad credentials on a public endpoint too', async () => {
      await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('nobody', 'x')).expect(401, { detail: 'Invalid username/password.' });
      await request(sut.url).get('/api/v1/').set('Authorization', basicHeader('nobody', 'x')).expect(401);
    });

    it('rejects malformed Basic headers', async () => {
      await request(sut.url).get('/api/v1/user').set('Authorization', 'Basic').expect(401, { detail: 'Invalid basic header. No credentials provided.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', 'Basic a b').expect(401, { detail: 'Invalid basic header. Credentials string should not contain spaces.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', 'Basic !!!').expect(401, { detail: 'Invalid basic header. Credentials not correctly base64 encoded.' });
      const noColon = Buffer.from('alice').toString('base64');
      await request(sut.url).get('/api/v1/user').set('Authorization', `Basic ${noColon}`).expect(401, { detail: 'Invalid basic header. Credentials not correctly base64 encoded.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('alice', '')).expect(401, { detail: 'Invalid username/password.' });
    });

    it('keeps colons in the password (RFC 7617), which passport-http alone would cut at the second one', async () => {
      const colons = await createTestUser(sut.app, { password: 'pa:ss:word:long' });
      await request(sut.url).get('/api/v1/user').set('Authorization', colons.basic).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader(colons.username, 'pa:ss')).expect(401, { detail: 'Invalid username/password.' });
    });
  });

  describe('Bearer (passport-http-bearer)', () => {
    it('authenticates with a local access token, and uses a token only from the Authorization header', async () => {
      const bearer = await createTestBearerToken(sut.app, alice);
      const token = bearer.slice('Bearer '.length);
      expect((await request(sut.url).get('/api/v1/forms').set('Authorization', bearer).expect(200)).body).toEqual([]);
      // RFC 6750 §2.3 allows ?access_token=, but it ends up in logs: never used.
      const res = await request(sut.url).get('/api/v1/user').query({ access_token: token }).expect(401);
      expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
      // One method per request (RFC 6750 §2): a second token beside the header is refused.
      await request(sut.url).get('/api/v1/forms').query({ access_token: token }).set('Authorization', bearer)
        .expect(401, { detail: 'Invalid token header. Send the access token in the Authorization header only.' });
      await request(sut.url).get('/api/v1/forms').set('Authorization', 'Bearer nope').expect(401, { detail: 'Invalid token.' }).expect('WWW-Authenticate', 'Bearer');
    });
  });

  describe('Token', () => {
    it('authenticates with the API token', async () => {
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', alice.token).expect(200);
      expect(res.body.username).toBe('alice');
    });

    it('accepts the scheme word case-insensitively', async () => {
      await request(sut.url).get('/api/v1/user').set('Authorization', `token ${alice.apiToken}`).expect(200);
    });

    it('rejects malformed and unknown tokens with 401 naming the scheme', async () => {
      let res = await request(sut.url).get('/api/v1/user').set('Authorization', 'Token').expect(401);
      expect(res.body).toEqual({ detail: 'Invalid token header. No credentials provided.' });
      expect(res.headers['www-authenticate']).toBe('Token');
      res = await request(sut.url).get('/api/v1/user').set('Authorization', 'Token a b').expect(401);
      expect(res.body).toEqual({ detail: 'Invalid token header. Token string should not contain spaces.' });
      res = await request(sut.url).get('/api/v1/user').set('Authorization', `Token ${'0'.repeat(40)}`).expect(401);
      expect(res.body).toEqual({ detail: 'Invalid token.' });
      expect(res.headers['www-authenticate']).toBe('Token');
    });

    it('stores tokens hashed, never in clear', async () => {
      const ds = sut.app.get(DataSource);
      const rows: Array<{ key_hash: string; key_encrypted: string }> = await ds.query('SELECT key_hash, key_encrypted FROM api_tokens WHERE user_id = $1', [alice.id]);
      expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(rows[0]!.key_hash).not.toContain(alice.apiToken);
      expect(rows[0]!.key_encrypted).not.toContain(alice.apiToken);
      const users: Array<{ password_hash: string }> = await ds.query('SELECT password_hash FROM users WHERE id = $1', [alice.id]);
      expect(users[0]!.password_hash).toMatch(/^\$argon2id\$/);
    });

    it('regenerate_auth_token answers 201 with the new key; the old one stops working', async () => {
      const bob = await createTestUser(sut.app, { username: 'bob' });
      const res = await request(sut.url).get('/api/v1/user/regenerate_auth_token').set('Authorization', bob.token).expect(201);
      expect(res.headers['content-type']).toMatch(/json/);
      expect(res.body).toMatch(/^[0-9a-f]{40}$/);
      expect(res.body).not.toBe(bob.apiToken);
      await request(sut.url).get('/api/v1/user').set('Authorization', bob.token).expect(401, { detail: 'Invalid token.' });
      const me = await request(sut.url).get('/api/v1/user').set('Authorization', `Token ${res.body}`).expect(200);
      expect(me.body.api_token).toBe(res.body);
      await request(sut.url).get('/api/v1/user/regenerate_auth_token').expect(401);
    });
  });

  describe('TempToken', () => {
    it('authenticates with the temp token; DELETE /user/expire (Basic only) removes it', async () => {
      const carol = await createTestUser(sut.app, { username: 'carol' });
      const me = await request(sut.url).get('/api/v1/user').set('Authorization', carol.basic).expect(200);
      const temp = `TempToken ${me.body.temp_token}`;
      const again = await request(sut.url).get('/api/v1/user').set('Authorization', temp).expect(200);
      expect(again.body.temp_token).toBe(me.body.temp_token);

      // Expire accepts Basic only: Token and TempToken callers are not authenticated for it.
      let res = await request(sut.url).delete('/api/v1/user/expire').set('Authorization', carol.token).expect(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="api"');
      await request(sut.url).delete('/api/v1/user/expire').set('Authorization', temp).expect(401);
      await request(sut.url).delete('/api/v1/user/expire').expect(401);

      await request(sut.url).delete('/api/v1/user/expire').set('Authorization', carol.basic).expect(204);
      res = await request(sut.url).get('/api/v1/user').set('Authorization', temp).expect(401);
      expect(res.body).toEqual({ detail: 'Invalid token.' });
      expect(res.headers['www-authenticate']).toBe('TempToken');
      res = await request(sut.url).delete('/api/v1/user/expire').set('Authorization', carol.basic).expect(400);
      expect(res.body).toEqual({ detail: 'Temporary token not found!' });
    });

    it('rejects malformed temp tokens', async () => {
      await request(sut.url).get('/api/v1/user').set('Authorization', 'TempToken').expect(401, { detail: 'Invalid token header. No credentials provided.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', 'TempToken x y').expect(401, { detail: 'Invalid token header. Token string should not contain spaces.' });
    });
  });

  describe('disabled user', () => {
    it('answers 401 for every scheme', async () => {
      const dave = await createTestUser(sut.app, { username: 'dave' });
      const me = await request(sut.url).get('/api/v1/user').set('Authorization', dave.basic).expect(200);
      await sut.app.get(DataSource).query('UPDATE users SET is_active = false WHERE id = $1', [dave.id]);
      await request(sut.url).get('/api/v1/user').set('Authorization', dave.basic).expect(401, { detail: 'User inactive or deleted.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', dave.token).expect(401, { detail: 'User inactive or deleted.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', `TempToken ${me.body.temp_token}`).expect(401, { detail: 'User inactive or deleted.' });
    });
  });

  describe('lockout', () => {
    it('locks a user out after 5 failed Basic logins with 429 and Retry-After', async () => {
      const erin = await createTestUser(sut.app, { username: 'erin' });
      for (let i = 0; i < 5; i++) {
        await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('erin', `wrong${i}`)).expect(401);
      }
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', erin.basic).expect(429);
      expect(res.body).toEqual({ detail: 'Too many failed login attempts. Try again later.' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(900);
      // The lockout is per user and per password login: the token still works, others still log in.
      await request(sut.url).get('/api/v1/user').set('Authorization', erin.token).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', alice.basic).expect(200);
    });

    it('a successful login resets the count', async () => {
      const fay = await createTestUser(sut.app, { username: 'fay' });
      for (let i = 0; i < 4; i++) await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('fay', 'bad')).expect(401);
      await request(sut.url).get('/api/v1/user').set('Authorization', fay.basic).expect(200);
      for (let i = 0; i < 4; i++) await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('fay', 'bad')).expect(401);
      await request(sut.url).get('/api/v1/user').set('Authorization', fay.basic).expect(200);
    });
  });

  describe('CORS', () => {
    it('answers a browser preflight without a credentials header', async () => {
      const res = await request(sut.url)
        .options('/api/v1/user')
        .set('Origin', 'https://app.example.org')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'authorization, content-type')
        .expect(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-headers']).toMatch(/Authorization/);
      expect(res.headers['access-control-allow-headers']).toMatch(/Content-Type/);
      expect(res.headers['access-control-allow-methods']).toMatch(/DELETE/);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('adds the origin header to actual responses, errors included', async () => {
      const ok = await request(sut.url).get('/api/v1/user').set('Origin', 'https://app.example.org').set('Authorization', alice.token).expect(200);
      expect(ok.headers['access-control-allow-origin']).toBe('*');
      const denied = await request(sut.url).get('/api/v1/user').set('Origin', 'https://app.example.org').expect(401);
      expect(denied.headers['access-control-allow-origin']).toBe('*');
      expect(denied.headers['access-control-allow-credentials']).toBeUndefined();
    });
  });

  describe('platform admin from configuration', () => {
    it('creates the admin of COLLECT_ADMIN_USERNAME/PASSWORD (dev default admin/admin-password)', async () => {
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('admin', 'admin-password')).expect(200);
      expect(res.body.is_superuser).toBe(true);
    });
  });
});

describe('collect-api authentication settings', () => {
  it('expires a temp token after DEFAULT_TEMP_TOKEN_EXPIRY_TIME and re-creates it', async () => {
    const sut = await startTestCollectApp({ DEFAULT_TEMP_TOKEN_EXPIRY_TIME: '1', AUTH_TOKEN_CACHE_TTL_MS: '60000' });
    try {
      const gus = await createTestUser(sut.app, { username: 'gus' });
      const me = await request(sut.url).get('/api/v1/user').set('Authorization', gus.basic).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', `TempToken ${me.body.temp_token}`).expect(200);
      await sleep(1100);
      // Cached lookups still check expiry.
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', `TempToken ${me.body.temp_token}`).expect(401);
      expect(res.body).toEqual({ detail: 'Token expired' });
      expect(res.headers['www-authenticate']).toBe('TempToken');
      const renewed = await request(sut.url).get('/api/v1/user').set('Authorization', gus.basic).expect(200);
      expect(renewed.body.temp_token).not.toBe(me.body.temp_token);
      await request(sut.url).get('/api/v1/user').set('Authorization', `TempToken ${renewed.body.temp_token}`).expect(200);
    } finally {
      await sut.close();
    }
  });

  it('ignores schemes not listed in AUTH_SCHEMES and narrows CORS to CORS_ALLOWED_ORIGINS', async () => {
    const sut = await startTestCollectApp({ AUTH_SCHEMES: 'basic', CORS_ALLOWED_ORIGINS: 'https://good.example', COLLECT_ADMIN_USERNAME: 'root', COLLECT_ADMIN_PASSWORD: 'root-password-1' });
    try {
      const hal = await createTestUser(sut.app, { username: 'hal' });
      await request(sut.url).get('/api/v1/user').set('Authorization', hal.basic).expect(200);
      const res = await request(sut.url).get('/api/v1/user').set('Authorization', hal.token).expect(401);
      expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
      const good = await request(sut.url).options('/api/v1/user').set('Origin', 'https://good.example').set('Access-Control-Request-Method', 'GET').expect(204);
      expect(good.headers['access-control-allow-origin']).toBe('https://good.example');
      const bad = await request(sut.url).options('/api/v1/user').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'GET').expect(204);
      expect(bad.headers['access-control-allow-origin']).toBeUndefined();
      await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('root', 'root-password-1')).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('admin', 'admin-password')).expect(401);
    } finally {
      await sut.close();
    }
  });

  it('refuses to start in production without COLLECT_SECRET_KEY', async () => {
    await expect(startTestCollectApp({ NODE_ENV: 'production' })).rejects.toThrow(/COLLECT_SECRET_KEY/);
  });
});
