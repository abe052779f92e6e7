import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '@collect/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { basicHeader, createTestBearerToken, createTestUser, type TestUser } from './test-users.js';


/** A real local HTTP server standing in for the client application's redirect endpoint. */
async function startRedirectReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body>client received ${req.url?.length ?? 0} chars</body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/callback`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('collect-api OAuth 2.0 provider (/o/)', () => {
  let sut: TestCollectApp;
  let receiver: { url: string; close(): Promise<void> };
  let browser: Browser;
  let context: BrowserContext;
  let alice: TestUser;
  let bob: TestUser;
  let app: { id: number; client_id: string; client_secret: string };

  beforeAll(async () => {
    [sut, receiver, browser] = await Promise.all([
      startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '0' }),
      startRedirectReceiver(),
      chromium.launch({ executablePath: CHROMIUM.provides, args: CHROMIUM_ARGS }),
    ]);
    alice = await createTestUser(sut.app, { username: 'alice' });
    bob = await createTestUser(sut.app, { username: 'bob' });
    const res = await request(sut.url)
      .post('/api/v1/oauth-applications')
      .set('Authorization', alice.token)
      .send({ name: 'Demo <client>', client_type: 'confidential', authorization_grant_type: 'authorization-code', redirect_uris: receiver.url })
      .expect(201);
    app = res.body;
    context = await browser.newContext();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await receiver?.close();
    await sut?.close();
  });

  function authorizeUrl(params: Record<string, string>): string {
    return `${sut.url}/o/authorize?${new URLSearchParams(params).toString()}`;
  }

  /** Drives the pages in Chromium: login when asked, then the consent decision; returns the final redirect. */
  async function browse(page: Page, params: Record<string, string>, opts: { username?: string; password?: string; decision?: 'Allow' | 'Deny' } = {}): Promise<URL> {
    await page.goto(authorizeUrl(params));
    if (await page.locator('input[name=password]').count()) {
      await page.fill('input[name=username]', opts.username ?? 'alice');
      await page.fill('input[name=password]', opts.password ?? alice.password);
      await page.click('button[type=submit]');
    }
    await page.getByRole('button', { name: opts.decision ?? 'Allow' }).click();
    await page.waitForURL((u) => u.toString().startsWith(receiver.url));
    return new URL(page.url());
  }

  function exchange(body: Record<string, string>, auth: string | null = basicHeader(app.client_id, app.client_secret)) {
    const req = request(sut.url).post('/o/token').type('form');
    if (auth) req.set('Authorization', auth);
    return req.send(body);
  }

  describe('applications', () => {
    it('answers client_id and, once, client_secret', async () => {
      expect(app.client_id).toEqual(expect.any(String));
      expect(app.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const list = await request(sut.url).get('/api/v1/oauth-applications').set('Authorization', alice.token).expect(200);
      expect(list.body).toHaveLength(1);
      expect(list.body[0].client_id).toBe(app.client_id);
      expect(list.body[0]).not.toHaveProperty('client_secret');
      const one = await request(sut.url).get(`/api/v1/oauth-applications/${app.id}`).set('Authorization', alice.token).expect(200);
      expect(one.body).not.toHaveProperty('client_secret');
    });

    it('needs a user, hides other users’ applications and validates the fields', async () => {
      await request(sut.url).post('/api/v1/oauth-applications').send({ name: 'x', redirect_uris: receiver.url }).expect(401);
      await request(sut.url).get('/api/v1/oauth-applications').expect(401);
      await request(sut.url).get(`/api/v1/oauth-applications/${app.id}`).set('Authorization', bob.token).expect(404, { detail: 'Not found.' });
      await request(sut.url).delete(`/api/v1/oauth-applications/${app.id}`).set('Authorization', bob.token).expect(404);
      await request(sut.url).get('/api/v1/oauth-applications/abc').set('Authorization', bob.token).expect(404);
      expect((await request(sut.url).get('/api/v1/oauth-applications').set('Authorization', bob.token).expect(200)).body).toEqual([]);
      const bad = await request(sut.url)
        .post('/api/v1/oauth-applications')
        .set('Authorization', bob.token)
        .send({ client_type: 'secret', authorization_grant_type: 'password', redirect_uris: 'javascript:alert(1)' })
        .expect(400);
      expect(Object.keys(bad.body).sort()).toEqual(['authorization_grant_type', 'client_type', 'name', 'redirect_uris']);
      await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', bob.token).send({ name: 'x', redirect_uris: 'https://a.example/cb#frag' }).expect(400);
      const admin = await createTestUser(sut.app, { superuser: true });
      await request(sut.url).get(`/api/v1/oauth-applications/${app.id}`).set('Authorization', admin.token).expect(200);
    });

    it('deletes an application with its tokens', async () => {
      const created = await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', bob.token).send({ name: 'tmp', redirect_uri: receiver.url }).expect(201);
      await request(sut.url).delete(`/api/v1/oauth-applications/${created.body.id}`).set('Authorization', bob.token).expect(204);
      await request(sut.url).get(`/api/v1/oauth-applications/${created.body.id}`).set('Authorization', bob.token).expect(404);
      await exchange({ grant_type: 'authorization_code', code: 'x' }, basicHeader(created.body.client_id, created.body.client_secret)).expect(401);
    });
  });

  describe('authorization code flow in Chromium', () => {
    let tokens: { access_token: string; refresh_token: string };

    it('login page, consent page, redirect with state unchanged, token exchange, Bearer call', async () => {
      const page = await context.newPage();
      const state = `s t&a=t/e-${randomBytes(4).toString('hex')}-é`;
      await page.goto(authorizeUrl({ client_id: app.client_id, response_type: 'code', state }));
      expect(await page.title()).toBe('Sign in');
      expect(await page.content()).toContain('Demo &lt;client&gt;');

      // A wrong password shows the form again with an error.
      await page.fill('input[name=username]', 'alice');
      await page.fill('input[name=password]', 'wrong');
      await page.click('button[type=submit]');
      await expect(page.getByRole('alert').textContent()).resolves.toContain('correct username and password');

      await page.fill('input[name=password]', alice.password);
      await page.click('button[type=submit]');
      expect(await page.title()).toBe('Authorize');
      const consent = await page.content();
      expect(consent).toContain('read');
      expect(consent).toContain('write');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((u) => u.toString().startsWith(receiver.url));
      const landed = new URL(page.url());
      expect(landed.origin + landed.pathname).toBe(receiver.url);
      expect(landed.searchParams.get('state')).toBe(state);
      const code = landed.searchParams.get('code')!;
      expect(code).toBeTruthy();
      expect([...landed.searchParams.keys()]).toEqual(['state', 'code']);
      await page.close();

      const res = await exchange({ grant_type: 'authorization_code', code, client_id: app.client_id }).expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 36000,
        refresh_token: expect.any(String),
        scope: 'read write groups',
      });
      tokens = res.body;
      const me = await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
      expect(me.body.username).toBe('alice');

      // Stored hashed: neither token appears in the database.
      const rows: Array<{ token_hash: string }> = await sut.app.get(DataSource).query('SELECT token_hash FROM oauth_tokens');
      expect(rows.map((r) => r.token_hash).join()).not.toContain(tokens.access_token);

      // The code is single use; using it again also revokes what it issued.
      const again = await exchange({ grant_type: 'authorization_code', code }).expect(400);
      expect(again.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${tokens.access_token}`).expect(401, { detail: 'Invalid token.' });
    });

    it('refresh rotates: new pair works, the old access and refresh tokens do not', async () => {
      const page = await context.newPage();
      const landed = await browse(page, { client_id: app.client_id, response_type: 'code', state: 'r1' });
      await page.close();
      const first = (await exchange({ grant_type: 'authorization_code', code: landed.searchParams.get('code')! }).expect(200)).body;
      // Client authentication by form fields this time.
      const second = (
        await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: app.client_id, client_secret: app.client_secret }, null).expect(200)
      ).body;
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(second.scope).toBe('read write groups');
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${second.access_token}`).expect(200);
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${first.access_token}`).expect(401);
      // The rotated refresh token again: invalid_grant, and the family ends.
      const reuse = await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(400);
      expect(reuse.body.error).toBe('invalid_grant');
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${second.access_token}`).expect(401);
      await exchange({ grant_type: 'refresh_token', refresh_token: second.refresh_token }).expect(400);
    });

    it('Deny redirects with error=access_denied and the state', async () => {
      const page = await context.newPage();
      const landed = await browse(page, { client_id: app.client_id, response_type: 'code', state: 'deny-me' }, { decision: 'Deny' });
      await page.close();
      expect(landed.searchParams.get('error')).toBe('access_denied');
      expect(landed.searchParams.get('state')).toBe('deny-me');
      expect(landed.searchParams.get('code')).toBeNull();
    });

    it('a read-only token may GET but not write', async () => {
      const page = await context.newPage();
      const landed = await browse(page, { client_id: app.client_id, response_type: 'code', state: 'ro', scope: 'read' });
      await page.close();
      const tok = (await exchange({ grant_type: 'authorization_code', code: landed.searchParams.get('code')! }).expect(200)).body;
      expect(tok.scope).toBe('read');
      await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${tok.access_token}`).expect(200);
      const res = await request(sut.url).post('/api/v1/forms').set('Authorization', `Bearer ${tok.access_token}`).send({ id_string: 'ro', title: 'x', fields: [{ name: 'q', type: 'text' }] }).expect(403);
      expect(res.body.detail).toMatch(/write/);
      // Refresh cannot widen the scope.
      expect((await exchange({ grant_type: 'refresh_token', refresh_token: tok.refresh_token, scope: 'read write' }).expect(400)).body.error).toBe('invalid_scope');
    });

    it('PKCE (S256) for a public client, which must use it', async () => {
      const pub = (
        await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', alice.token).send({ name: 'SPA', client_type: 'public', redirect_uris: receiver.url }).expect(201)
      ).body;
      expect(pub).not.toHaveProperty('client_secret');
      const noPkce = await request(sut.url).get('/o/authorize').query({ client_id: pub.client_id, response_type: 'code', state: 'p0' }).expect(302);
      const noPkceUrl = new URL(noPkce.headers.location);
      expect(noPkceUrl.searchParams.get('error')).toBe('invalid_request');
      expect(noPkceUrl.searchParams.get('state')).toBe('p0');
      const plain = await request(sut.url).get('/o/authorize').query({ client_id: pub.client_id, response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }).expect(302);
      expect(new URL(plain.headers.location).searchParams.get('error')).toBe('invalid_request');

      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const page = await context.newPage();
      const landed = await browse(page, { client_id: pub.client_id, response_type: 'code', state: 'p1', code_challenge: challenge, code_challenge_method: 'S256' });
      await page.close();
      const code = landed.searchParams.get('code')!;
      expect((await exchange({ grant_type: 'authorization_code', code, client_id: pub.client_id }, null).expect(400)).body.error).toBe('invalid_grant');
      // That failed attempt did not burn the code.
      const wrong = randomBytes(32).toString('base64url');
      expect((await exchange({ grant_type: 'authorization_code', code, client_id: pub.client_id, code_verifier: wrong }, null).expect(400)).body.error).toBe('invalid_grant');
      const ok = await exchange({ grant_type: 'authorization_code', code, client_id: pub.client_id, code_verifier: verifier }, null).expect(200);
      expect(ok.body.token_type).toBe('Bearer');
      // A public client may not present a secret.
      expect((await exchange({ grant_type: 'refresh_token', refresh_token: ok.body.refresh_token }, basicHeader(pub.client_id, 'guess')).expect(401)).body.error).toBe('invalid_client');
      expect((await exchange({ grant_type: 'refresh_token', refresh_token: ok.body.refresh_token, client_id: pub.client_id }, null).expect(200)).body.access_token).toBeTruthy();
    });
  });

  describe('bad input', () => {
    it('a wrong or missing client secret is invalid_client (401)', async () => {
      let res = await exchange({ grant_type: 'authorization_code', code: 'x' }, basicHeader(app.client_id, 'wrong')).expect(401);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
      expect(res.headers['www-authenticate']).toMatch(/^Basic/);
      res = await exchange({ grant_type: 'authorization_code', code: 'x', client_id: app.client_id }, null).expect(401);
      expect(res.body.error).toBe('invalid_client');
      await exchange({ grant_type: 'authorization_code', code: 'x' }, basicHeader('nobody', 'x')).expect(401);
      await exchange({ grant_type: 'authorization_code', code: 'x' }, null).expect(401);
    });

    it('grant_type missing, unknown or unsupported; code missing or unknown', async () => {
      expect((await exchange({}).expect(400)).body.error).toBe('invalid_request');
      expect((await exchange({ grant_type: 'password', username: 'alice', password: 'x' }).expect(400)).body.error).toBe('unsupported_grant_type');
      expect((await exchange({ grant_type: 'client_credentials' }).expect(400)).body.error).toBe('unsupported_grant_type');
      expect((await exchange({ grant_type: 'authorization_code' }).expect(400)).body.error).toBe('invalid_request');
      expect((await exchange({ grant_type: 'authorization_code', code: 'nope' }).expect(400)).body.error).toBe('invalid_grant');
      expect((await exchange({ grant_type: 'refresh_token', refresh_token: 'nope' }).expect(400)).body.error).toBe('invalid_grant');
    });

    it('an unknown client or an unregistered redirect_uri is an error page, never a redirect', async () => {
      let res = await request(sut.url).get('/o/authorize').query({ client_id: 'nope', response_type: 'code' }).expect(400);
      expect(res.headers['content-type']).toMatch(/html/);
      expect(res.text).toContain('Invalid client_id');
      res = await request(sut.url).get('/o/authorize').query({ client_id: app.client_id, response_type: 'code', redirect_uri: 'https://evil.example/cb' }).expect(400);
      expect(res.text).toContain('Mismatching redirect URI');
      await request(sut.url).get('/o/authorize').query({ response_type: 'code' }).expect(400);
      const page = await context.newPage();
      const nav = await page.goto(authorizeUrl({ client_id: app.client_id, response_type: 'code', redirect_uri: 'https://evil.example/cb' }));
      expect(nav?.status()).toBe(400);
      expect(await page.getByRole('alert').textContent()).toContain('Mismatching redirect URI');
      await page.close();
    });

    it('a wrong response_type or scope redirects with the error and the state', async () => {
      let res = await request(sut.url).get('/o/authorize').query({ client_id: app.client_id, response_type: 'token', state: 'x1' }).expect(302);
      let loc = new URL(res.headers.location);
      expect(loc.searchParams.get('error')).toBe('unsupported_response_type');
      expect(loc.searchParams.get('state')).toBe('x1');
      res = await request(sut.url).get('/o/authorize').query({ client_id: app.client_id, response_type: 'code', scope: 'admin', state: 'x2' }).expect(302);
      loc = new URL(res.headers.location);
      expect(loc.searchParams.get('error')).toBe('invalid_scope');
    });

    it('redirect_uri given at authorize must be repeated at the token endpoint', async () => {
      const page = await context.newPage();
      const landed = await browse(page, { client_id: app.client_id, response_type: 'code', redirect_uri: receiver.url, state: 'ru' });
      await page.close();
      const code = landed.searchParams.get('code')!;
      expect((await exchange({ grant_type: 'authorization_code', code }).expect(400)).body.error).toBe('invalid_grant');
      expect((await exchange({ grant_type: 'authorization_code', code, redirect_uri: 'https://evil.example/cb' }).expect(400)).body.error).toBe('invalid_grant');
      await exchange({ grant_type: 'authorization_code', code, redirect_uri: receiver.url }).expect(200);
    });

    it('an expired code is invalid_grant; a code of another client too', async () => {
      const page = await context.newPage();
      const landed = await browse(page, { client_id: app.client_id, response_type: 'code', state: 'exp' });
      await page.close();
      const code = landed.searchParams.get('code')!;
      const other = (await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', bob.token).send({ name: 'other', redirect_uris: receiver.url }).expect(201)).body;
      expect((await exchange({ grant_type: 'authorization_code', code }, basicHeader(other.client_id, other.client_secret)).expect(400)).body.error).toBe('invalid_grant');
      await sut.app.get(DataSource).query(`UPDATE oauth_grants SET expires_at = now() - interval '1 second'`);
      const res = await exchange({ grant_type: 'authorization_code', code }).expect(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'Authorization code expired.' });
    });

    it('forms without a valid CSRF token are refused', async () => {
      await request(sut.url).post('/o/authorize').type('form').send({ client_id: app.client_id, response_type: 'code', decision: 'allow' }).expect(403);
      await request(sut.url)
        .post('/o/login')
        .type('form')
        .send({ username: 'alice', password: alice.password, next: `/o/authorize?client_id=${app.client_id}&response_type=code` })
        .expect(403);
    });

    it('an unknown, expired or revoked Bearer token is 401 naming Bearer', async () => {
      let res = await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${'a'.repeat(43)}`).expect(401);
      expect(res.body).toEqual({ detail: 'Invalid token.' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
      await request(sut.url).get('/api/v1/user').set('Authorization', 'Bearer').expect(401, { detail: 'Invalid token header. No credentials provided.' });
      await request(sut.url).get('/api/v1/user').set('Authorization', 'Bearer a.b.c').expect(401, { detail: 'Invalid token.' });
      const page = await context.newPage();
      const landed = await browse(page, { client_id: app.client_id, response_type: 'code', state: 'e' });
      await page.close();
      const tok = (await exchange({ grant_type: 'authorization_code', code: landed.searchParams.get('code')! }).expect(200)).body;
      await sut.app.get(DataSource).query(`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'access'`);
      res = await request(sut.url).get('/api/v1/user').set('Authorization', `Bearer ${tok.access_token}`).expect(401);
      expect(res.body).toEqual({ detail: 'Token expired' });
      // Refresh still works after the access token expired.
      await exchange({ grant_type: 'refresh_token', refresh_token: tok.refresh_token }).expect(200);
    });

    it('a disabled user’s Bearer token is 401, and the user cannot sign in on the login page', async () => {
      const dora = await createTestUser(sut.app, { username: 'dora' });
      const bearer = await createTestBearerToken(sut.app, dora);
      await request(sut.url).get('/api/v1/user').set('Authorization', bearer).expect(200);
      await sut.app.get(DataSource).query('UPDATE users SET is_active = false WHERE id = $1', [dora.id]);
      await request(sut.url).get('/api/v1/user').set('Authorization', bearer).expect(401, { detail: 'User inactive or deleted.' });
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(authorizeUrl({ client_id: app.client_id, response_type: 'code', state: 'd' }));
      await p.fill('input[name=username]', 'dora');
      await p.fill('input[name=password]', dora.password);
      await p.click('button[type=submit]');
      expect(await p.getByRole('alert').textContent()).toContain('correct username and password');
      await ctx.close();
    });

    it('the login page enforces the lockout too', async () => {
      const page = await context.newPage();
      const carol = await createTestUser(sut.app, { username: 'carol' });
      // Fresh context: no session yet.
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(authorizeUrl({ client_id: app.client_id, response_type: 'code', state: 'l' }));
      for (let i = 0; i < 5; i++) {
        await p.fill('input[name=username]', 'carol');
        await p.fill('input[name=password]', `bad${i}`);
        await p.click('button[type=submit]');
      }
      await p.fill('input[name=username]', 'carol');
      await p.fill('input[name=password]', carol.password);
      const [resp] = await Promise.all([p.waitForResponse((r) => r.url().endsWith('/o/login')), p.click('button[type=submit]')]);
      expect(resp.status()).toBe(429);
      expect(await p.getByRole('alert').textContent()).toContain('Too many failed login attempts');
      await ctx.close();
      await page.close();
    });
  });
});
