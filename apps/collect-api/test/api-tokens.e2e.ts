import { randomUUID } from 'node:crypto';
import type { ServiceProcess } from '@collect/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { LastUsedBatch } from '../src/api-tokens/last-used.js';
import { ChangeNotifications } from '../src/database/change-notifications.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { startReplicaProcess, startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestBearerToken, createTestUser, type TestUser } from './test-users.js';

/**
 * Personal access tokens (docs/auth.md, "Personal access tokens"): the API, what each scope
 * and the form narrowing allow, 401 for expired, revoked and unknown tokens, `last_used_at`
 * written in batches. The cross-route matrix is in hardening-permission-matrix.e2e.ts.
 */
describe('personal access tokens', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let other: TestUser;
  let admin: TestUser;
  let formA: number;
  let formB: number;
  const idA = `pat_a_${process.pid}`;
  const idB = `pat_b_${process.pid}`;
  const api = () => request(sut.url);

  const create = (auth: string, body: object) => api().post('/api/v1/api-tokens').set('Authorization', auth).send(body);
  const mint = async (body: object, who: TestUser = owner): Promise<{ id: number; token: string }> => (await create(who.basic, body).expect(201)).body;
  const submitJson = (auth: string, idString: string) =>
    api().post('/api/v1/submissions').set('Authorization', auth).send({ id: idString, submission: { name: 'x', 'meta/instanceID': `uuid:${randomUUID()}` } });
  const submitXml = (auth: string, idString: string) =>
    api().post('/submission').set('Authorization', auth).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ idString, instanceId: randomUUID() })), 'submission.xml');

  beforeAll(async () => {
    sut = await startTestCollectApp({ API_TOKEN_MAX_DAYS: '120' });
    [owner, other, admin] = await Promise.all([createTestUser(sut.app), createTestUser(sut.app), createTestUser(sut.app, { superuser: true })]);
    const form = async (idString: string) =>
      (await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm(idString)).expect(201)).body.formid as number;
    [formA, formB] = await Promise.all([form(idA), form(idB)]);
  });
  afterAll(() => sut?.close());

  it('creates a token shown once (cpat_, prefix = first 12 characters), kept as a hash, listed without it', async () => {
    const before = Date.now();
    const res = await create(owner.basic, { name: 'phone 1', scopes: ['submit'], forms: [formA] }).expect(201);
    const body = res.body as Record<string, unknown> & { token: string; prefix: string; expires_at: string };
    expect(Object.keys(body).sort()).toEqual(['created_at', 'expires_at', 'forms', 'id', 'last_used_at', 'name', 'prefix', 'scopes', 'token']);
    expect(body).toMatchObject({ name: 'phone 1', scopes: ['submit'], forms: [formA], last_used_at: null });
    expect(body.token).toMatch(/^cpat_[A-Za-z0-9_-]{43}$/);
    expect(body.prefix).toBe(body.token.slice(0, 12));
    // Default lifetime: 90 days.
    const days = (Date.parse(body.expires_at) - before) / 86_400_000;
    expect(days).toBeGreaterThan(89.99);
    expect(days).toBeLessThan(90.01);
    const [row] = await sut.app.get(DataSource).query(`SELECT * FROM personal_tokens WHERE id = $1`, [body.id]);
    expect(JSON.stringify(row)).not.toContain(body.token);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    const list = (await api().get('/api/v1/api-tokens').set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;
    const listed = list.find((t) => t.id === body.id)!;
    expect(listed).toEqual({ ...body, token: undefined, created_at: listed.created_at });
    expect(JSON.stringify(list)).not.toContain(body.token);
    // Temporary tokens create them too.
    const temp = (await api().get('/api/v1/user').set('Authorization', owner.token).expect(200)).body.temp_token as string;
    await create(`TempToken ${temp}`, { name: 'by temp', scopes: ['read'] }).expect(201);
  });

  it('refuses bad requests with 400: scopes, forms, expiry (future, at most API_TOKEN_MAX_DAYS), unknown fields', async () => {
    const day = 86_400_000;
    const cases: Array<[object, string]> = [
      [{ scopes: ['read'] }, 'name'],
      [{ name: 'x' }, 'scopes'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['admin'] }, 'scopes'],
      [{ name: 'x', scopes: ['read', 'read'] }, 'scopes'],
      [{ name: 'x', scopes: ['read'], forms: [] }, 'forms'],
      [{ name: 'x', scopes: ['read'], forms: ['a'] }, 'forms'],
      [{ name: 'x', scopes: ['read'], forms: [2_000_000_000] }, 'forms'],
      [{ name: 'x', scopes: ['read'], expires_at: 'tomorrow' }, 'expires_at'],
      [{ name: 'x', scopes: ['read'], expires_at: new Date(Date.now() - 1000).toISOString() }, 'expires_at'],
      [{ name: 'x', scopes: ['read'], expires_at: new Date(Date.now() + 121 * day).toISOString() }, 'expires_at'],
      [{ name: 'x'.repeat(101), scopes: ['read'] }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await create(owner.basic, body);
      expect([JSON.stringify(body), res.status, Object.keys(res.body)]).toEqual([JSON.stringify(body), 400, [field]]);
    }
    // Someone else's form is "not found" like a missing one.
    const theirs = (await api().post('/api/v1/forms').set('Authorization', other.token).set('Content-Type', 'application/xml').send(demoXForm(`pat_o_${process.pid}`)).expect(201)).body.formid;
    expect((await create(owner.basic, { name: 'x', scopes: ['read'], forms: [theirs] }).expect(400)).body).toEqual({ forms: [`Form ${theirs} not found.`] });
    await create(owner.basic, { name: 'x', scopes: ['read'], bogus: 1 }).expect(400);
    await create(owner.basic, { name: 'x', scopes: ['read'], expires_at: new Date(Date.now() + 119 * day).toISOString() }).expect(201);
  });

  it('only the user’s own session creates: Bearer and personal tokens get 403; a personal token cannot list tokens either', async () => {
    const bearer = await createTestBearerToken(sut.app, owner);
    await create(bearer, { name: 'x', scopes: ['read'] }).expect(403);
    const { token } = await mint({ name: 'w', scopes: ['write'] });
    for (const auth of [`Token ${token}`, `Bearer ${token}`]) {
      await create(auth, { name: 'x', scopes: ['read'] }).expect(403);
      await api().get('/api/v1/api-tokens').set('Authorization', auth).expect(403);
      await api().get('/api/v1/user/regenerate_auth_token').set('Authorization', auth).expect(403);
      await api().get('/api/v1/oauth-applications').set('Authorization', auth).expect(403);
      await api().post('/api/v1/oauth-applications').set('Authorization', auth).send({ name: 'm', redirect_uris: 'https://c.example/cb' }).expect(403);
      // The profile, without the unscoped credentials.
      const me = (await api().get('/api/v1/user').set('Authorization', auth).expect(200)).body;
      expect(me.username).toBe(owner.username);
      expect(me).not.toHaveProperty('api_token');
      expect(me).not.toHaveProperty('temp_token');
    }
    // The API token still works after all this (nothing rotated).
    await api().get('/api/v1/user').set('Authorization', owner.token).expect(200);
  });

  it('a submit token narrowed to one form submits to it (JSON and OpenRosa), gets only it in formList, and is 403 on other forms and on any read of data', async () => {
    const { token } = await mint({ name: 'phone', scopes: ['submit'], forms: [formA] });
    for (const auth of [`Token ${token}`, `Bearer ${token}`]) {
      await submitJson(auth, idA).expect(201);
      await submitXml(auth, idA).expect(201);
      await submitJson(auth, idB).expect(403);
      await submitXml(auth, idB).expect(403);
      const list = (await api().get('/formList').set('Authorization', auth).expect(200)).text;
      expect(list).toContain(`<formID>${idA}</formID>`);
      expect(list).not.toContain(`<formID>${idB}</formID>`);
      expect((await api().get(`/${owner.username}/formList`).set('Authorization', auth).expect(200)).text).not.toContain(idB);
      await api().get(`/forms/${formA}/form.xml`).set('Authorization', auth).expect(200);
      await api().get(`/api/v1/forms/${formA}/form.xml`).set('Authorization', auth).expect(200);
      await api().get(`/xformsManifest/${formA}`).set('Authorization', auth).expect(200);
      await api().head('/submission').set('Authorization', auth).expect(204);
      await api().get(`/forms/${formB}/form.xml`).set('Authorization', auth).expect(403);
      await api().get(`/xformsManifest/${formB}`).set('Authorization', auth).expect(403);
      for (const path of [`/api/v1/data/${formA}`, `/api/v1/data/${formA}.csv`, `/api/v1/forms/${formA}`, '/api/v1/forms', '/api/v1/media.json', `/api/v1/data/${formB}`]) {
        await api().get(path).set('Authorization', auth).expect(403);
      }
      await api().patch(`/api/v1/forms/${formA}`).set('Authorization', auth).send({ title: 'No' }).expect(403);
    }
  });

  it('a read token reads what the user may read and changes nothing; narrowed, it sees only its forms', async () => {
    const { token } = await mint({ name: 'dashboard', scopes: ['read'] });
    const auth = `Token ${token}`;
    await api().get(`/api/v1/data/${formA}`).set('Authorization', auth).expect(200);
    expect((await api().get('/api/v1/forms').set('Authorization', auth).expect(200)).body.map((f: { formid: number }) => f.formid).sort()).toEqual([formA, formB].sort());
    await submitJson(auth, idA).expect(403);
    await submitXml(auth, idA).expect(403);
    await api().patch(`/api/v1/forms/${formA}`).set('Authorization', auth).send({ title: 'No' }).expect(403);
    await api().post('/api/v1/forms').set('Authorization', auth).set('Content-Type', 'application/xml').send(demoXForm(`pat_r_${process.pid}`)).expect(403);
    await api().delete(`/api/v1/forms/${formB}`).set('Authorization', auth).expect(403);
    const narrowed = `Bearer ${(await mint({ name: 'one form', scopes: ['read'], forms: [formB] })).token}`;
    expect((await api().get('/api/v1/forms').set('Authorization', narrowed).expect(200)).body.map((f: { formid: number }) => f.formid)).toEqual([formB]);
    await api().get(`/api/v1/data/${formB}`).set('Authorization', narrowed).expect(200);
    await api().get(`/api/v1/data/${formA}`).set('Authorization', narrowed).expect(403);
    await api().get(`/api/v1/forms/${formA}`).set('Authorization', narrowed).expect(403);
  });

  it('a write token does what the user’s roles allow, and no more', async () => {
    const auth = `Token ${(await mint({ name: 'integration', scopes: ['write'] })).token}`;
    await api().patch(`/api/v1/forms/${formA}`).set('Authorization', auth).send({ title: 'Renamed' }).expect(200);
    await submitJson(auth, idA).expect(201);
    await api().get(`/api/v1/data/${formA}`).set('Authorization', auth).expect(200);
    // The other user's token: a write scope buys no role.
    const theirs = `Token ${(await mint({ name: 'theirs', scopes: ['write'] }, other)).token}`;
    await api().patch(`/api/v1/forms/${formA}`).set('Authorization', theirs).send({ title: 'No' }).expect(404);
  });

  it('expired, revoked and unknown tokens are a 401 like a wrong password; revocation by the user or a platform admin', async () => {
    const db = sut.app.get(DataSource);
    const expired = await mint({ name: 'old', scopes: ['read'] });
    await db.query(`UPDATE personal_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const revoked = await mint({ name: 'gone', scopes: ['read'] });
    await api().get('/api/v1/user').set('Authorization', `Token ${revoked.token}`).expect(200);
    await api().delete(`/api/v1/api-tokens/${revoked.id}`).set('Authorization', owner.token).expect(204);
    await api().delete(`/api/v1/api-tokens/${revoked.id}`).set('Authorization', owner.token).expect(404);
    const live = await mint({ name: 'live', scopes: ['read'] });
    const unknown = `${live.token.slice(0, 12)}${'A'.repeat(36)}`;
    for (const token of [expired.token, revoked.token, unknown, 'cpat_short', `cpat_${'x'.repeat(43)}`]) {
      for (const scheme of ['Token', 'Bearer']) {
        const res = await api().get('/api/v1/user').set('Authorization', `${scheme} ${token}`).expect(401);
        expect(res.body).toEqual({ detail: 'Invalid token.' });
        expect(res.headers['www-authenticate']).toBe(scheme);
      }
    }
    // Not listed once revoked; another user cannot see or revoke it; a platform admin lists and revokes anyone's.
    expect((await api().get('/api/v1/api-tokens').set('Authorization', owner.token).expect(200)).body.map((t: { id: number }) => t.id)).not.toContain(revoked.id);
    await api().delete(`/api/v1/api-tokens/${live.id}`).set('Authorization', other.token).expect(404);
    await api().get(`/api/v1/api-tokens?user=${owner.username}`).set('Authorization', other.token).expect(403);
    const listed = (await api().get(`/api/v1/api-tokens?user=${owner.username}`).set('Authorization', admin.token).expect(200)).body as Array<{ id: number }>;
    expect(listed.map((t) => t.id)).toContain(live.id);
    await api().get('/api/v1/api-tokens?user=nobody-here').set('Authorization', admin.token).expect(404);
    await api().delete(`/api/v1/api-tokens/${live.id}`).set('Authorization', admin.token).expect(204);
    await api().get('/api/v1/user').set('Authorization', `Token ${live.token}`).expect(401);
    await api().delete('/api/v1/api-tokens/abc').set('Authorization', owner.token).expect(404);
  });

  it('keeps last_used_at without a write per request: uses are noted in memory and written in one statement', async () => {
    const db = sut.app.get(DataSource);
    const { id, token } = await mint({ name: 'busy', scopes: ['read'] });
    for (let i = 0; i < 20; i++) await api().get('/api/v1/user').set('Authorization', `Token ${token}`).expect(200);
    // Nothing written yet (the flush interval is 30 s here), but the listing already shows the use.
    expect((await db.query(`SELECT last_used_at FROM personal_tokens WHERE id = $1`, [id]))[0].last_used_at).toBeNull();
    const shown = ((await api().get('/api/v1/api-tokens').set('Authorization', owner.token).expect(200)).body as Array<{ id: number; last_used_at: string | null }>).find((t) => t.id === id)!;
    expect(shown.last_used_at).not.toBeNull();
    await sut.app.get(LastUsedBatch).flush();
    const [row] = await db.query(`SELECT last_used_at FROM personal_tokens WHERE id = $1`, [id]);
    expect(new Date(row.last_used_at).toISOString()).toBe(shown.last_used_at);
  });
});

/**
 * Two collect-api processes on one database and Redis (replicas behind a load balancer): `a` in
 * this process, the other the built `dist/main.js` as a child process. Caches are kept far longer
 * than the test (AUTH_TOKEN_CACHE_TTL_MS 300 s), so only the change notification (docs/auth.md,
 * "Personal access tokens") can make a revocation seen by the replica that did not revoke. How
 * long after the DELETE each replica first refuses is measured and printed, not asserted: the
 * bounds below are liveness bounds.
 */
describe('personal access tokens across replicas (two processes)', () => {
  let a: TestCollectApp;
  let child: ServiceProcess | undefined;
  let owner: TestUser;
  const replicas = () => [
    { name: 'in-process', url: a.url },
    { name: 'child-process', url: child!.url },
  ];

  beforeAll(async () => {
    a = await startTestCollectApp({
      AUTH_TOKEN_CACHE_TTL_MS: '300000',
      API_TOKEN_LAST_USED_FLUSH_MS: '100',
      COLLECT_SECRET_KEY: 'pat-replicas-secret-key-shared-by-both-processes',
    });
    child = await startReplicaProcess(a);
    owner = await createTestUser(a.app);
    await waitFor(() => a.app.get(ChangeNotifications).live);
    // The child's listener is its own connection; both must listen before anything is cached.
    const listeners = async () =>
      (await a.app.get(DataSource).query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'collect-changes' AND query ILIKE 'LISTEN%'`,
      ))[0].n as number;
    await waitFor(async () => (await listeners()) >= 2, 30_000);
  }, 120_000);
  afterAll(async () => {
    try {
      await child?.stop();
    } finally {
      await a?.close();
    }
  }, 60_000);

  const status = async (url: string, token: string) => (await request(url).get('/api/v1/user').set('Authorization', `Token ${token}`)).status;

  /** Milliseconds from `since` until the replica at `url` first answers 401 for `token`, polled every 20 ms. */
  const firstRefusal = async (name: string, url: string, token: string, since: number): Promise<number> => {
    for (;;) {
      if ((await status(url, token)) === 401) return Math.round(performance.now() - since);
      if (performance.now() - since > 30_000) throw new Error(`the ${name} replica still accepts the revoked token after 30 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it.each(['child-process', 'in-process'])(
    'a token revoked on the %s replica is refused by both, not after the 300 s cache TTL (cached on both before)',
    async (revoker) => {
      const { id, token } = (await request(a.url).post('/api/v1/api-tokens').set('Authorization', owner.basic).send({ name: `r ${revoker}`, scopes: ['read'] }).expect(201)).body;
      for (const { url } of replicas()) expect(await status(url, token)).toBe(200);
      const on = replicas().find((r) => r.name === revoker)!;
      await request(on.url).delete(`/api/v1/api-tokens/${id}`).set('Authorization', owner.token).expect(204);
      const answered = performance.now();
      const delays = await Promise.all(replicas().map(async ({ name, url }) => `${name} ${await firstRefusal(name, url, token, answered)} ms`));
      console.log(`personal token revoked on the ${revoker} replica; first 401 after the DELETE answered: ${delays.join(', ')}`);
      for (const { url } of replicas()) expect(await status(url, token)).toBe(401);
    },
  );

  it('a token expiring is refused by both replicas from its expiry on (cached on both before)', async () => {
    const expiresAt = new Date(Date.now() + 3_000).toISOString();
    const { token } = (await request(a.url).post('/api/v1/api-tokens').set('Authorization', owner.basic).send({ name: 'e', scopes: ['read'], expires_at: expiresAt }).expect(201)).body;
    for (const { url } of replicas()) expect(await status(url, token)).toBe(200);
    await Promise.all(replicas().map(({ url }) => waitFor(async () => (await status(url, token)) === 401, 15_000)));
  });

  it('last_used_at reaches the listing of the other replica after a flush (each way)', async () => {
    for (const [user, lister] of [replicas(), replicas().reverse()]) {
      const { id, token } = (await request(a.url).post('/api/v1/api-tokens').set('Authorization', owner.basic).send({ name: `u ${user.name}`, scopes: ['read'] }).expect(201)).body;
      expect(await status(user.url, token)).toBe(200);
      await waitFor(async () => {
        const list = (await request(lister.url).get('/api/v1/api-tokens').set('Authorization', owner.token)).body as Array<{ id: number; last_used_at: string | null }>;
        return list.find((t) => t.id === id)?.last_used_at != null;
      }, 15_000);
    }
  });
});

/** Polls `check` until it holds; a liveness bound, not a speed assertion. */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
