import request from 'supertest';
import { DataSource } from 'typeorm';
import { OAuthApplicationsService } from '../src/oauth2/oauth-applications.service.js';
import { OAuth2Service } from '../src/oauth2/oauth2.service.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { basicHeader, createTestUser, type TestUser } from './test-users.js';

/**
 * The lockout counts before the password is checked (N parallel guesses
 * get at most the limit's worth of checks), failed authentications of any scheme are limited
 * per address, Basic is rate limited on every route, and password hashing is bounded per
 * process; a code or refresh token of the local OAuth provider is redeemed once, however many
 * requests race for it. Each block runs its own app (its own Redis prefix), so counts do not mix.
 */

type Answer = { status: number; retryAfter?: string };

/** Sends every request at once and tallies the answers by status. */
async function parallel(n: number, send: (i: number) => request.Test): Promise<{ answers: Answer[]; count: (status: number) => number }> {
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => send(i).then((r) => ({ status: r.status, retryAfter: r.headers['retry-after'] as string | undefined }))));
  return { answers, count: (status) => answers.filter((a) => a.status === status).length };
}

describe('security: authentication limits', () => {
  describe('lockout race (defaults: 5 failures per user)', () => {
    let sut: TestCollectApp;
    let victim: TestUser;
    beforeAll(async () => {
      sut = await startTestCollectApp();
      victim = await createTestUser(sut.app);
    });
    afterAll(() => sut.close());

    it('30 parallel wrong Basic guesses for one user: at most 5 are checked (401), the rest 429 with Retry-After', async () => {
      const { answers, count } = await parallel(30, (i) => request(sut.url).get('/api/v1/user').set('Authorization', basicHeader(victim.username, `guess-${i}`)));
      expect(count(401)).toBeLessThanOrEqual(5);
      expect(count(401)).toBeGreaterThan(0);
      expect(count(429)).toBe(30 - count(401));
      expect(answers.filter((a) => a.status === 429).every((a) => Number(a.retryAfter) > 0)).toBe(true);
      // Locked: the right password is refused too, without being checked.
      await request(sut.url).get('/api/v1/user').set('Authorization', victim.basic).expect(429);
      await request(sut.url).get('/api/v1/user').set('Authorization', victim.token).expect(200);
    });
  });

  describe('failed authentications per address (RATE_LIMIT_AUTH_FAILURES_PER_IP=10)', () => {
    let sut: TestCollectApp;
    let user: TestUser;
    beforeAll(async () => {
      sut = await startTestCollectApp({ RATE_LIMIT_AUTH_FAILURES_PER_IP: '10' });
      user = await createTestUser(sut.app);
    });
    afterAll(() => sut.close());

    it('counts wrong Token, TempToken and Bearer credentials and Basic ones refused before a password check; the 11th failure answers 429 with Retry-After, for every scheme', async () => {
      // `user:` (no password) is refused by passport-http itself, before PasswordLoginService counts it.
      const wrong = [(i: number) => `Token ${'0'.repeat(39)}${i}`, (i: number) => `TempToken ${'0'.repeat(39)}${i}`, (i: number) => `Bearer ${'0'.repeat(39)}${i}`, (i: number) => `Basic ${Buffer.from(`nobody${i}:`).toString('base64')}`];
      for (let i = 0; i < 10; i++) {
        await request(sut.url).get('/api/v1/forms').set('Authorization', wrong[i % wrong.length]!(i)).expect(401);
      }
      const refused = await request(sut.url).get('/api/v1/forms').set('Authorization', `Token ${'f'.repeat(40)}`).expect(429);
      expect(refused.body).toEqual({ detail: 'Too many failed authentication attempts from your address. Try again later.' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Now every authentication from this address waits, good credentials included.
      await request(sut.url).get('/api/v1/user').set('Authorization', user.token).expect(429);
      await request(sut.url).get('/api/v1/user').set('Authorization', user.basic).expect(429);
      // Anonymous requests are not authentications.
      await request(sut.url).get('/api/v1').expect(200);
    });
  });

  describe('password guesses across usernames from one address (RATE_LIMIT_AUTH_FAILURES_PER_IP=10)', () => {
    let sut: TestCollectApp;
    beforeAll(async () => {
      sut = await startTestCollectApp({ RATE_LIMIT_AUTH_FAILURES_PER_IP: '10', PASSWORD_HASH_QUEUE: '100' });
    });
    afterAll(() => sut.close());

    it('30 parallel Basic guesses for 30 usernames: at most 10 are checked, the rest 429', async () => {
      const { count } = await parallel(30, (i) => request(sut.url).get('/api/v1/forms').set('Authorization', basicHeader(`nobody${i}`, 'guess')));
      expect(count(401)).toBeLessThanOrEqual(10);
      expect(count(429)).toBe(30 - count(401));
    });
  });

  describe('Basic on every route (RATE_LIMIT_BASIC_PER_USERNAME=3, RATE_LIMIT_BASIC_PER_IP=6)', () => {
    let sut: TestCollectApp;
    let alice: TestUser;
    let bob: TestUser;
    beforeAll(async () => {
      sut = await startTestCollectApp({ RATE_LIMIT_BASIC_PER_USERNAME: '3', RATE_LIMIT_BASIC_PER_IP: '6' });
      alice = await createTestUser(sut.app);
      bob = await createTestUser(sut.app);
    });
    afterAll(() => sut.close());

    it('counts right and wrong Basic requests per username and per address on any route; other schemes are not counted', async () => {
      await request(sut.url).get('/api/v1/forms').set('Authorization', alice.basic).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', alice.basic).expect(200);
      await request(sut.url).get('/api/v1/data/1').set('Authorization', basicHeader(alice.username, 'wrong')).expect(401);
      const over = await request(sut.url).get(`/api/v1/profiles/${bob.username}`).set('Authorization', alice.basic).expect(429);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      await request(sut.url).get('/api/v1/user').set('Authorization', alice.token).expect(200);
      // bob: 2 more from this address reach its limit of 6 (4 so far), then the address is refused.
      await request(sut.url).get('/api/v1/user').set('Authorization', bob.basic).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', bob.basic).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', bob.basic).expect(429);
    });
  });

  describe('password hashing per process (PASSWORD_HASH_CONCURRENCY=1, PASSWORD_HASH_QUEUE=1)', () => {
    let sut: TestCollectApp;
    beforeAll(async () => {
      sut = await startTestCollectApp({ PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '1' });
    });
    afterAll(() => sut.close());

    it('12 parallel Basic requests: what does not fit answers 503 with Retry-After at once; nothing else fails', async () => {
      const { answers, count } = await parallel(12, (i) => request(sut.url).get('/api/v1/forms').set('Authorization', basicHeader(`stranger${i}`, 'guess')));
      expect(count(503)).toBeGreaterThan(0);
      expect(count(401)).toBeGreaterThanOrEqual(2);
      expect(count(401) + count(503)).toBe(12);
      expect(answers.filter((a) => a.status === 503).every((a) => a.retryAfter === '1')).toBe(true);
      // Anonymous registration hashes a password too: the same bound applies.
      const regs = await parallel(8, (i) => request(sut.url).post('/api/v1/profiles').send({ username: `reg${i}`, password: `password-${i}-long`, email: `r${i}@example.org` }));
      expect(regs.count(503)).toBeGreaterThan(0);
      expect(regs.count(201) + regs.count(503)).toBe(8);
    });
  });

  describe('local /o/token: one redemption per code and per refresh token', () => {
    let sut: TestCollectApp;
    let owner: TestUser;
    beforeAll(async () => {
      sut = await startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '0' });
      owner = await createTestUser(sut.app);
    });
    afterAll(() => sut.close());

    /** A confidential client of the local provider: a new code for `owner`, and POST /o/token as the client. */
    const oauthClient = async (name: string) => {
      const { app: client, clientSecret } = await sut.app.get(OAuthApplicationsService).create(owner.id, { name, clientType: 'confidential', redirectUris: ['https://client.example/cb'] });
      const oauth = sut.app.get(OAuth2Service);
      return {
        newCode: async () => {
          const check = await oauth.checkAuthorizeRequest({ client_id: client.clientId, response_type: 'code', scope: 'read' });
          if (check.kind !== 'ok') throw new Error('authorize request refused');
          return new URL(await oauth.approve(check.request, owner.id)).searchParams.get('code')!;
        },
        post: (body: Record<string, string>) => request(sut.url).post('/o/token').type('form').set('Authorization', basicHeader(client.clientId, clientSecret!)).send(body),
      };
    };

    it('10 parallel redemptions of one code, then of one refresh token: exactly one succeeds each time', async () => {
      const { newCode, post } = await oauthClient('race');
      const code = await newCode();
      const codes = await Promise.all(Array.from({ length: 10 }, () => post({ grant_type: 'authorization_code', code })));
      const won = codes.filter((r) => r.status === 200);
      expect(won).toHaveLength(1);
      expect(codes.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(9);
      // A code presented twice may be stolen (RFC 6749 §4.1.2): what it issued is revoked, as the CAS does.
      expect((await post({ grant_type: 'refresh_token', refresh_token: won[0].body.refresh_token })).status).toBe(400);

      const tokens = await post({ grant_type: 'authorization_code', code: await newCode() }).expect(200);
      const refreshes = await Promise.all(Array.from({ length: 10 }, () => post({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token })));
      expect(refreshes.filter((r) => r.status === 200)).toHaveLength(1);
      expect(refreshes.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(9);
    });

    // The winner's tokens are stored in the transaction that marks the code (or the refresh token)
    // used: a request that finds it used always finds, and revokes, what it issued. Here the winner is
    // held between the two steps (another transaction locks the user's row, which the token's foreign
    // key must share) while a second request presents the same code or refresh token.
    it('a second presentation while the first is still issuing revokes what the first issues', async () => {
      const { newCode: code, post } = await oauthClient('held');
      const ds = sut.app.get(DataSource);
      const lockWaiters = async () => Number((await ds.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0].n);
      const until = async (done: () => Promise<boolean>) => {
        for (const started = Date.now(); !(await done()); ) {
          if (Date.now() - started > 15_000) throw new Error('timed out waiting');
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      const presentTwiceWhileHeld = async (body: Record<string, string>) => {
        const holder = ds.createQueryRunner();
        await holder.connect();
        await holder.startTransaction();
        await holder.query(`SELECT id FROM users WHERE id = $1 FOR UPDATE`, [owner.id]);
        const first = post(body).then((r) => r);
        await until(async () => (await lockWaiters()) >= 1);
        let secondSettled = false;
        const second = post(body).then((r) => ((secondSettled = true), r));
        await until(async () => secondSettled || (await lockWaiters()) >= 2);
        await holder.commitTransaction();
        await holder.release();
        const answers = await Promise.all([first, second]);
        const won = answers.filter((r) => r.status === 200);
        expect(won).toHaveLength(1);
        expect(answers.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(1);
        return won[0].body as { access_token: string; refresh_token: string };
      };

      const fromCode = await presentTwiceWhileHeld({ grant_type: 'authorization_code', code: await code() });
      expect((await post({ grant_type: 'refresh_token', refresh_token: fromCode.refresh_token })).status).toBe(400);
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${fromCode.access_token}`).expect(401);

      const tokens = await post({ grant_type: 'authorization_code', code: await code() }).expect(200);
      const fromRefresh = await presentTwiceWhileHeld({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token });
      expect((await post({ grant_type: 'refresh_token', refresh_token: fromRefresh.refresh_token })).status).toBe(400);
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${fromRefresh.access_token}`).expect(401);
    });
  });
});
