import * as oidc from 'openid-client';
import { createUser } from './support/accounts.js';
import { CallbackServer } from './support/callback-server.js';
import { FormLogin, formAction } from './support/form-login.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

describe('cas login page: brute-force protection', () => {
  let sut: TestCasApp;
  let rp: CallbackServer;
  let web: oidc.Configuration;

  beforeAll(async () => {
    rp = await new CallbackServer().start();
    sut = await startTestCasApp({
      CAS_DEV_SEED_FILE: DEV_SEED,
      CAS_DEV_COLLECT_WEB_REDIRECT_URI: `${rp.base}/auth/callback`,
      CAS_LOGIN_MAX_FAILURES_PER_IP: '8', // lowered so the per-address test stays short
    });
    web = await oidc.discovery(new URL(sut.url), 'collect-web', 'collect-web-secret', undefined, { execute: [oidc.allowInsecureRequests] });
  });
  afterAll(async () => {
    await sut?.close();
    await rp?.close();
  });

  async function loginForm(): Promise<{ driver: FormLogin; action: string }> {
    const url = oidc.buildAuthorizationUrl(web, {
      redirect_uri: `${rp.base}/auth/callback`, scope: 'openid read', state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    });
    const driver = new FormLogin(sut.url);
    const page = await driver.follow(url.href);
    return { driver, action: formAction(page.body, '/login')! };
  }

  it('refuses the 6th attempt for a user within 15 minutes even with the right password', async () => {
    await createUser(sut, 'mallory-target', 'right-password');
    const { driver, action } = await loginForm();
    for (let i = 0; i < 5; i++) {
      const wrong = await driver.submit(action, { username: 'mallory-target', password: `wrong-${i}` });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('Wrong username or password.');
    }
    const sixth = await driver.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'mallory-target', password: 'right-password' }).toString(),
    });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(await sixth.text()).toContain('Too many failed sign-in attempts');
    // Another user is not affected by that lockout.
    const other = await driver.submit(action, { username: 'demo', password: 'demo-password' });
    expect(other.location ?? other.status).toBeDefined();
    expect(other.status).not.toBe(429);
  });

  it('counts failures per address too, across usernames', async () => {
    const { driver, action } = await loginForm();
    // 5 failures so far come from the previous test; 3 more reach the lowered limit of 8.
    for (let i = 0; i < 3; i++) await driver.submit(action, { username: `nobody-${i}`, password: 'x' });
    const next = await driver.submit(action, { username: 'demo', password: 'demo-password' });
    expect(next.status).toBe(429);
  });

  it('answers an empty form with 400 and an expired interaction with a clear page', async () => {
    const { driver, action } = await loginForm();
    expect((await driver.submit(action, {})).status).toBe(400);
    const stranger = new FormLogin(sut.url); // no interaction cookie
    const res = await stranger.submit(action, { username: 'demo', password: 'demo-password' });
    expect(res.status).toBe(400);
    expect(res.body).toContain('expired');
    expect((await stranger.follow('/interaction/unknown-uid')).status).toBe(400);
  });
});
