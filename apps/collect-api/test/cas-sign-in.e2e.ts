import request from 'supertest';
import { DataSource } from 'typeorm';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '@collect/testing';
import { OAuthApplicationsService } from '../src/oauth2/oauth-applications.service.js';
import { casUserId, onCollect, startCasEnv, startSignInOverHttp, type CasEnv } from './cas-env.js';

const JWT_LIKE = /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./;

describe('sign-in through the CAS (collect-api as backend-for-frontend)', () => {
  let env: CasEnv;
  let browser: Browser;
  let db: DataSource;

  beforeAll(async () => {
    env = await startCasEnv();
    db = env.collect.app.get(DataSource);
    for (const username of ['demo', 'alice']) {
      await request(env.collect.url).post('/api/v1/cas-users').set('Authorization', env.admin.token).send({ cas_user_id: await casUserId(env, username) }).expect(201);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM.provides, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  const sessionsOf = async (username: string) =>
    Number((await db.query(`SELECT count(*)::int AS n FROM cas_sessions s JOIN users u ON u.id = s.user_id WHERE u.username = $1`, [username]))[0].n);

  /** On the CAS pages: sign in, then allow (the consent page only appears while the grant is new). */
  async function casLogin(page: Page, username: string, password: string, backTo: string): Promise<void> {
    await page.waitForSelector('input[name="username"]');
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"]');
    await page.waitForURL((url) => url.href.startsWith(backTo) || url.pathname.startsWith('/interaction/'));
    if (!page.url().startsWith(backTo)) await Promise.all([page.waitForURL((url) => url.href.startsWith(backTo)), page.getByRole('button', { name: 'Allow' }).click()]);
  }

  it('signs in in Chromium: login page → CAS login + consent → signed in, with no token reachable by the page; logout ends both sessions', async () => {
    const context: BrowserContext = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${env.collect.url}/login`);
    await page.getByRole('link', { name: 'Sign in with the central service' }).click();
    expect(new URL(page.url()).origin).toBe(env.cas.url);
    await casLogin(page, 'demo', 'demo-password', `${env.collect.url}/login`);
    await expect(page.locator('#signed-in-user').textContent()).resolves.toBe('demo');

    // Nothing a script can read holds a token.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length])).toEqual([0, 0]);
    expect(await page.content()).not.toMatch(JWT_LIKE);
    const cookies = await context.cookies(env.collect.url);
    const session = cookies.find((c) => c.name === 'collect_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: false });
    expect(session!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookies.filter((c) => !c.httpOnly).map((c) => c.name)).toEqual([]);
    expect(cookies.find((c) => c.name === 'collect_session_login')).toBeUndefined();
    expect(cookies.filter((c) => JWT_LIKE.test(c.value))).toEqual([]);
    // The tokens live server-side, encrypted.
    const [row] = await db.query(`SELECT tokens_enc FROM cas_sessions s JOIN users u ON u.id = s.user_id WHERE u.username = 'demo'`);
    expect(row.tokens_enc).toMatch(/^v1\./);
    expect(row.tokens_enc).not.toMatch(JWT_LIKE);
    // The cookie is for the HTML pages only: the JSON API still wants an Authorization header.
    await request(env.collect.url).get('/api/v1/user').set('Cookie', `collect_session=${session!.value}`).expect(401);

    // Logout: local session gone, then the CAS's own sign-out page, back to collect-api signed out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.origin === env.cas.url);
    expect(await sessionsOf('demo')).toBe(0);
    await Promise.all([page.waitForURL(`${env.collect.url}/login`), page.getByRole('button', { name: 'Sign out' }).click()]);
    await expect(page.getByRole('link', { name: 'Sign in with the central service' }).count()).resolves.toBe(1);
    expect((await context.cookies(env.collect.url)).find((c) => c.name === 'collect_session')).toBeUndefined();
    // The CAS session ended too: signing in again asks for the password.
    await page.getByRole('link', { name: 'Sign in with the central service' }).click();
    await page.waitForSelector('input[name="password"]');
    await context.close();
  });

  it('lets a CAS-signed-in browser through the /o/authorize login step of the local OAuth 2.0 provider', async () => {
    const { app: client } = await env.collect.app.get(OAuthApplicationsService).create(env.admin.id, { name: 'Local client', clientType: 'confidential', redirectUris: ['https://client.example/cb'] });
    const authorize = `${env.collect.url}/o/authorize?client_id=${client.clientId}&response_type=code&scope=read`;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorize);
    await expect(page.locator('input[name="password"]').count()).resolves.toBe(1);
    await page.getByRole('link', { name: 'Sign in with the central service' }).click();
    await casLogin(page, 'alice', 'alice-password', `${env.collect.url}/o/authorize`);
    await expect(page.getByRole('heading', { name: 'Authorize Local client?' }).count()).resolves.toBe(1);
    await expect(page.locator('main').textContent()).resolves.toContain('Signed in as alice');
    await context.close();
  });

  it('refuses a stolen state: the callback from another browser (no binding cookie) fails and burns the sign-in', async () => {
    const { jar, callback } = await startSignInOverHttp(env, 'alice', 'alice-password');
    const thief = await fetch(onCollect(env, callback), { redirect: 'manual' });
    expect(thief.status).toBe(400);
    expect(await thief.text()).toContain('started in another browser');
    expect(thief.headers.getSetCookie().some((c) => c.startsWith('collect_session='))).toBe(false);
    const victim = await jar.fetch(onCollect(env, callback));
    expect(victim.status).toBe(400);
  });

  it('refuses a replayed callback and a made-up state', async () => {
    const before = await sessionsOf('alice');
    const { jar, callback } = await startSignInOverHttp(env, 'alice', 'alice-password');
    const first = await jar.fetch(onCollect(env, callback));
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/login');
    expect(first.headers.getSetCookie().find((c) => c.startsWith('collect_session='))).toMatch(/HttpOnly; SameSite=Lax$/);
    expect(await sessionsOf('alice')).toBe(before + 1);
    const replay = await jar.fetch(onCollect(env, callback));
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('already completed');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'made-up');
    expect((await jar.fetch(onCollect(env, forged))).status).toBe(400);
    await request(env.collect.url).get('/auth/callback').expect(400);
    expect(await sessionsOf('alice')).toBe(before + 1);
  });

  it('refuses a CAS user who is not on-boarded with 403 and no session', async () => {
    const { jar, callback } = await startSignInOverHttp(env, 'mallory', 'mallory-password');
    const res = await jar.fetch(onCollect(env, callback));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('not on-boarded');
    expect(res.headers.getSetCookie().some((c) => c.startsWith('collect_session=') && !c.includes('Max-Age=0'))).toBe(false);
  });

  it('keeps return_to on this site', async () => {
    for (const evil of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      const { jar, callback } = await startSignInOverHttp(env, 'alice', 'alice-password', evil);
      const res = await jar.fetch(onCollect(env, callback));
      expect(res.headers.get('location')).toBe('/login');
    }
  });

  /**
   * The /tokens page (docs/auth.md, "The /tokens page") for a CAS-signed-in user, in Chromium:
   * create (shown once, copy button), list, revoke; nothing of a token kept by the browser;
   * CSRF-protected; the headers of the other pages.
   */
  describe('the /tokens page behind it', () => {
    it('signs in, creates a token shown once with a copy button, lists it, revokes it; the browser keeps nothing of it', async () => {
      const context = await browser.newContext();
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.collect.url });
      const page = await context.newPage();
      const first = await page.goto(`${env.collect.url}/tokens`);
      expect(new URL(page.url()).origin).toBe(env.cas.url);
      expect(first).not.toBeNull();
      await casLogin(page, 'alice', 'alice-password', `${env.collect.url}/tokens`);
      await expect(page.locator('#signed-in-user').textContent()).resolves.toBe('alice');
      await expect(page.locator('#no-tokens').count()).resolves.toBe(1);

      // Create: a name, the scope radio, "Create".
      await page.fill('input[name="name"]', 'my phone');
      await page.check('input[type="radio"][name="scope"][value="submit"]');
      const [created] = await Promise.all([page.waitForResponse((r) => r.url() === `${env.collect.url}/tokens` && r.request().method() === 'POST'), page.getByRole('button', { name: 'Create' }).click()]);
      const headers = created.headers();
      expect(headers['cache-control']).toBe('no-store');
      expect(headers['x-frame-options']).toBe('DENY');
      expect(headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'$/);
      const token = (await page.locator('#new-token').textContent())!;
      expect(token).toMatch(/^cpat_[A-Za-z0-9_-]{43}$/);
      // The copy button (the page's one script, allowed by its hash) puts it on the clipboard.
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.waitForFunction(() => document.getElementById('copy-status')?.textContent !== '');
      await expect(page.locator('#copy-status').textContent()).resolves.toBe('Copied.');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);

      // It works as a submit token of alice's.
      const alice = (await env.collect.app.get(DataSource).query(`SELECT id FROM users WHERE username = 'alice'`))[0].id as number;
      const [row] = await env.collect.app.get(DataSource).query(`SELECT user_id, scopes, name FROM personal_tokens WHERE prefix = $1`, [token.slice(0, 12)]);
      expect(row).toEqual({ user_id: alice, scopes: ['submit'], name: 'my phone' });
      await request(env.collect.url).get('/formList').set('Authorization', `Token ${token}`).expect(200);
      await request(env.collect.url).get('/api/v1/forms').set('Authorization', `Bearer ${token}`).expect(403);

      // Nothing of it kept by the browser: no script-readable cookie, no storage, not on the page once left.
      expect(await page.evaluate(() => document.cookie)).toBe('');
      expect(await page.evaluate(() => [localStorage.length, sessionStorage.length])).toEqual([0, 0]);
      expect((await context.cookies()).filter((c) => c.value.includes('cpat_') || !c.httpOnly)).toEqual([]);
      const listed = await page.goto(`${env.collect.url}/tokens`);
      expect(listed!.status()).toBe(200);
      expect(await page.content()).not.toContain(token);
      expect(page.url()).not.toContain('cpat_');
      await expect(page.locator('.token .token-name').allTextContents()).resolves.toEqual(['my phone']);

      // Revoke: gone from the list, refused by the API.
      await Promise.all([page.waitForURL(`${env.collect.url}/tokens`), page.getByRole('button', { name: 'Revoke my phone' }).click()]);
      await expect(page.locator('#no-tokens').count()).resolves.toBe(1);
      await request(env.collect.url).get('/formList').set('Authorization', `Token ${token}`).expect(401);
      await context.close();
    });

    it('refuses a POST without the session’s CSRF token, and sends a browser without a session to sign in', async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${env.collect.url}/tokens`);
      await casLogin(page, 'alice', 'alice-password', `${env.collect.url}/tokens`);
      const session = (await context.cookies(env.collect.url)).find((c) => c.name === 'collect_session')!;
      const db = env.collect.app.get(DataSource);
      const count = async () => Number((await db.query(`SELECT count(*)::int AS n FROM personal_tokens`))[0].n);
      const before = await count();
      for (const csrf of [undefined, 'forged', (await page.locator('input[name="csrf_token"]').first().getAttribute('value'))!.slice(1)]) {
        const res = await request(env.collect.url).post('/tokens').set('Cookie', `collect_session=${session.value}`).type('form').send({ name: 'x', scope: 'write', ...(csrf === undefined ? {} : { csrf_token: csrf }) });
        expect(res.status).toBe(403);
        expect(res.text).not.toContain('cpat_');
      }
      expect(await count()).toBe(before);
      // The right CSRF token with the session: created (what the page's form does).
      const csrf = (await page.locator('input[name="csrf_token"]').first().getAttribute('value'))!;
      const ok = await request(env.collect.url).post('/tokens').set('Cookie', `collect_session=${session.value}`).type('form').send({ name: 'x', scope: 'write', csrf_token: csrf });
      expect(ok.status).toBe(200);
      expect(await count()).toBe(before + 1);
      // Bad input: the page again with the reason, nothing created.
      const bad = await request(env.collect.url).post('/tokens').set('Cookie', `collect_session=${session.value}`).type('form').send({ name: 'x', scope: 'admin', csrf_token: csrf });
      expect(bad.status).toBe(400);
      expect(await count()).toBe(before + 1);
      // Without a session: to the sign-in, nothing created; the API never reads the cookie.
      const anonymous = await request(env.collect.url).get('/tokens').expect(302);
      expect(anonymous.headers.location).toBe('/auth/login?return_to=%2Ftokens');
      await request(env.collect.url).post('/tokens').type('form').send({ name: 'x', scope: 'write', csrf_token: csrf }).expect(303);
      await request(env.collect.url).post('/api/v1/api-tokens').set('Cookie', `collect_session=${session.value}`).send({ name: 'x', scopes: ['read'] }).expect(401);
      expect(await count()).toBe(before + 1);
      await context.close();
    });
  });
});
