import * as oidc from 'openid-client';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '@collect/testing';
import { AccountsService } from '../src/accounts/accounts.service.js';
import { CallbackServer } from './support/callback-server.js';
import { FormLogin } from './support/form-login.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';


describe('cas sessions: logout, revocation, introspection, disabled users', () => {
  let sut: TestCasApp;
  let rp: CallbackServer;
  let web: oidc.Configuration;
  let browser: Browser;
  let redirectUri: string;

  beforeAll(async () => {
    rp = await new CallbackServer().start();
    redirectUri = `${rp.base}/auth/callback`;
    sut = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED, CAS_DEV_COLLECT_WEB_REDIRECT_URI: redirectUri });
    web = await oidc.discovery(new URL(sut.url), 'collect-web', 'collect-web-secret', undefined, { execute: [oidc.allowInsecureRequests] });
    browser = await chromium.launch({ executablePath: CHROMIUM.provides, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await sut?.close();
    await rp?.close();
  });

  async function signIn(username = 'demo', password = 'demo-password', driver = new FormLogin(sut.url)) {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(web, {
      redirect_uri: redirectUri, scope: 'openid profile read', state: 'st',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const callback = await driver.authorize(url.href, username, password);
    if (!callback.searchParams.get('code')) return { callback };
    return { callback, tokens: await oidc.authorizationCodeGrant(web, callback, { pkceCodeVerifier: verifier, expectedState: 'st' }) };
  }

  it('RP-initiated logout in Chromium: sign-out page, then back to the registered post-logout URI', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const verifier = oidc.randomPKCECodeVerifier();
    await page.goto(oidc.buildAuthorizationUrl(web, {
      redirect_uri: redirectUri, scope: 'openid read', state: 'st',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).href);
    await page.fill('input[name="username"]', 'demo');
    await page.fill('input[name="password"]', 'demo-password');
    await page.click('button[type="submit"]');
    await Promise.all([page.waitForURL(`${redirectUri}?**`), page.getByRole('button', { name: 'Allow' }).click()]);
    const tokens = await oidc.authorizationCodeGrant(web, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: 'st' });

    await page.goto(oidc.buildEndSessionUrl(web, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${rp.base}/`, state: 'bye' }).href);
    await expect(page.getByRole('heading', { name: 'Sign out?' }).count()).resolves.toBe(1);
    await Promise.all([page.waitForURL(`${rp.base}/?state=bye`), page.getByRole('button', { name: 'Sign out' }).click()]);
    // The session is gone: a new authorization shows the login page again.
    await page.goto(oidc.buildAuthorizationUrl(web, {
      redirect_uri: redirectUri, scope: 'openid read', state: 'st2',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    }).href);
    await expect(page.locator('input[name="password"]').count()).resolves.toBe(1);
    await context.close();
  });

  it('shows an error page (not a redirect) in Chromium for an unknown client', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${sut.url}/connect/authorize?client_id=nobody&response_type=code&redirect_uri=${encodeURIComponent(redirectUri)}&scope=openid`);
    expect(res?.status()).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('invalid_client');
    await page.close();
  });

  it('introspects and revokes refresh tokens; a revoked one no longer refreshes', async () => {
    const { tokens } = await signIn();
    const active = await oidc.tokenIntrospection(web, tokens!.refresh_token!);
    expect(active).toMatchObject({ active: true, client_id: 'collect-web', scope: expect.stringContaining('read') });
    await oidc.tokenRevocation(web, tokens!.refresh_token!);
    expect((await oidc.tokenIntrospection(web, tokens!.refresh_token!)).active).toBe(false);
    await expect(oidc.refreshTokenGrant(web, tokens!.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a disabled user can neither sign in nor refresh', async () => {
    await sut.app.get(AccountsService).create({ username: 'dora', password: 'dora-password' });
    const { tokens } = await signIn('dora', 'dora-password');
    await sut.app.get(AccountsService).setEnabled('dora', false);
    await expect(oidc.refreshTokenGrant(web, tokens!.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const driver = new FormLogin(sut.url);
    await expect(signIn('dora', 'dora-password', driver)).rejects.toThrow();
    expect(driver.trail.at(-1)).toMatchObject({ status: 401 });
    expect(driver.trail.at(-1)!.body).toContain('Wrong username or password.');
  });
});
