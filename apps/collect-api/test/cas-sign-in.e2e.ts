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
});
