import request from 'supertest';
import { DataSource } from 'typeorm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '@collect/testing';
import { casUserId, startCasEnv, type CasEnv } from './cas-env.js';

/**
 * The /tokens page (docs/auth.md, "The /tokens page") in Chromium for a user signed in through
 * the real CAS (child process): create (shown once, copy button), list, revoke; nothing of a
 * token kept by the browser; CSRF-protected; the headers of the other pages.
 */
describe('the /tokens page for CAS-signed-in users', () => {
  let env: CasEnv;
  let browser: Browser;

  beforeAll(async () => {
    env = await startCasEnv();
    await request(env.collect.url).post('/api/v1/cas-users').set('Authorization', env.admin.token).send({ cas_user_id: await casUserId(env, 'alice') }).expect(201);
    browser = await chromium.launch({ executablePath: CHROMIUM.provides, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  /** On the CAS pages: sign in, then allow (the consent page only appears while the grant is new). */
  async function casLogin(page: Page, username: string, password: string, backTo: string): Promise<void> {
    await page.waitForSelector('input[name="username"]');
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"]');
    await page.waitForURL((url) => url.href.startsWith(backTo) || url.pathname.startsWith('/interaction/'));
    if (!page.url().startsWith(backTo)) await Promise.all([page.waitForURL((url) => url.href.startsWith(backTo)), page.getByRole('button', { name: 'Allow' }).click()]);
  }

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
