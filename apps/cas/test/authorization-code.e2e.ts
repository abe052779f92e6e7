import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '@collect/testing';
import { AccountsService } from '../src/accounts/accounts.service.js';
import type { CallbackServer } from './support/callback-server.js';
import { FormLogin } from './support/form-login.js';
import { startCasWithRelyingParty } from './support/relying-party.js';
import type { TestCasApp } from './test-app.js';


describe('cas authorization code + PKCE, refresh, implicit', () => {
  let sut: TestCasApp;
  let rp: CallbackServer;
  let browser: Browser;
  let web: oidc.Configuration;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  let demoId: string;
  let redirectUri: string;

  beforeAll(async () => {
    ({ sut, rp, redirectUri } = await startCasWithRelyingParty(({ base }) => [{
      client_id: 'spa-implicit', grant_types: ['implicit'], response_types: ['id_token token'], token_endpoint_auth_method: 'none',
      scopes: ['openid', 'profile', 'read'], resources: ['collect-api'], redirect_uris: [`${base}/implicit-callback`],
    }]));
    web = await oidc.discovery(new URL(sut.url), 'collect-web', 'collect-web-secret', oidc.ClientSecretBasic('collect-web-secret'), { execute: [oidc.allowInsecureRequests] });
    jwks = createRemoteJWKSet(new URL(`${sut.url}/.well-known/openid-configuration/jwks`));
    demoId = (await sut.app.get(AccountsService).findByUsername('demo'))!.id;
    browser = await chromium.launch({ executablePath: CHROMIUM.provides, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await sut?.close();
    await rp?.close();
  });

  async function authorizationRequest(extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(web, {
      redirect_uri: redirectUri,
      scope: 'openid profile email read write',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    });
    return { url, verifier, state };
  }

  /** A code obtained through the login and consent forms (over HTTP). */
  async function code(extra: Record<string, string> = {}) {
    const req = await authorizationRequest(extra);
    const callback = await new FormLogin(sut.url).authorize(req.url.href, 'demo', 'demo-password');
    return { ...req, callback, code: callback.searchParams.get('code')! };
  }

  const tokenRequest = (body: Record<string, string>) =>
    fetch(`${sut.url}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('collect-web:collect-web-secret').toString('base64')}` },
      body: new URLSearchParams(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));

  it('signs in through the real login and consent pages in Chromium, then exchanges, refreshes and detects reuse', async () => {
    const { url, verifier, state } = await authorizationRequest({ scope: 'openid profile email read write' });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url.href);

    // Login page: the two fields and a submit button, no script.
    await expect(page.locator('input[name="username"]').count()).resolves.toBe(1);
    await expect(page.locator('input[name="password"][type="password"]').count()).resolves.toBe(1);
    expect(await page.locator('script').count()).toBe(0);
    await page.fill('input[name="username"]', 'demo');
    await page.fill('input[name="password"]', 'demo-password');
    await page.click('button[type="submit"]');

    // Consent page lists the requested scopes with Allow and Deny.
    await page.waitForSelector('#scopes');
    const listed = await page.locator('#scopes li').allTextContents();
    expect(listed).toEqual(expect.arrayContaining(['profile', 'email', 'collect-api: read', 'collect-api: write']));
    await expect(page.getByRole('button', { name: 'Deny' }).count()).resolves.toBe(1);
    await Promise.all([page.waitForURL(`${redirectUri}?**`), page.getByRole('button', { name: 'Allow' }).click()]);

    const callback = new URL(page.url());
    expect(callback.searchParams.get('state')).toBe(state);
    // The browser never saw a token: only the code came back, and no page script could read one.
    expect(callback.searchParams.has('access_token')).toBe(false);
    expect(callback.hash).toBe('');
    await context.close();

    const tokens = await oidc.authorizationCodeGrant(web, callback, { pkceCodeVerifier: verifier, expectedState: state });
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer: sut.url, audience: 'collect-api', algorithms: ['RS256'] });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: demoId, client_id: 'collect-web', scope: 'read write' });
    expect(tokens.claims()).toMatchObject({ sub: demoId, preferred_username: 'demo', email: 'demo@example.org', aud: 'collect-web' });
    expect(tokens.refresh_token).toEqual(expect.any(String));

    // Refresh rotates the refresh token and issues a fresh access token.
    const refreshed = await oidc.refreshTokenGrant(web, tokens.refresh_token!);
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ aud: 'collect-api', sub: demoId });

    // Reusing the rotated (old) refresh token is refused and revokes the whole grant.
    const reuse = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const afterRevocation = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshed.refresh_token! });
    expect(afterRevocation).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('Deny on the consent page sends access_denied to the client', async () => {
    const { url } = await authorizationRequest();
    const callback = await new FormLogin(sut.url).authorize(url.href, 'demo', 'demo-password', 'deny');
    expect(callback.origin + callback.pathname).toBe(redirectUri);
    expect(callback.searchParams.get('error')).toBe('access_denied');
  });

  it('implicit returns id_token token in the fragment', async () => {
    const implicit = await oidc.discovery(new URL(sut.url), 'spa-implicit', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(implicit, { redirect_uri: `${rp.base}/implicit-callback`, response_type: 'id_token token', scope: 'openid profile read', nonce, state: 'st' });
    const callback = await new FormLogin(sut.url).authorize(url.href, 'demo', 'demo-password');
    const fragment = new URLSearchParams(callback.hash.slice(1));
    expect(fragment.get('token_type')).toBe('Bearer');
    expect(fragment.get('state')).toBe('st');
    const { payload } = await jwtVerify(fragment.get('access_token')!, jwks, { issuer: sut.url, audience: 'collect-api' });
    expect(payload).toMatchObject({ sub: demoId, scope: 'read', client_id: 'spa-implicit' });
    const id = await jwtVerify(fragment.get('id_token')!, jwks, { issuer: sut.url, audience: 'spa-implicit' });
    expect(id.payload).toMatchObject({ sub: demoId, nonce });
    expect(id.payload.at_hash).toEqual(expect.any(String));
  });

  describe('refusals', () => {
    it('PKCE plain: invalid_request', async () => {
      const { url } = await authorizationRequest({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
      const callback = await new FormLogin(sut.url).authorize(url.href, 'demo', 'demo-password');
      expect(callback.searchParams.get('error')).toBe('invalid_request');
    });

    it('no PKCE at all: invalid_request (PKCE is required for every client)', async () => {
      const url = oidc.buildAuthorizationUrl(web, { redirect_uri: redirectUri, scope: 'openid read', state: 's' });
      const callback = await new FormLogin(sut.url).authorize(url.href, 'demo', 'demo-password');
      expect(callback.searchParams.get('error')).toBe('invalid_request');
      expect(callback.searchParams.get('error_description')).toMatch(/PKCE/);
    });

    it('a redirect_uri not registered exactly: an error page, no redirect', async () => {
      const { url } = await authorizationRequest({ redirect_uri: `${redirectUri}/extra` });
      const step = await new FormLogin(sut.url).follow(url.href);
      expect(step.location).toBeUndefined();
      expect(step.status).toBe(400);
      expect(step.body).toMatch(/redirect_uri/);
    });

    it('an unknown scope: invalid_scope', async () => {
      const { url } = await authorizationRequest({ scope: 'openid read admin' });
      const callback = await new FormLogin(sut.url).authorize(url.href, 'demo', 'demo-password');
      expect(callback.searchParams.get('error')).toBe('invalid_scope');
    });

    it('missing code_verifier: invalid_grant', async () => {
      const c = await code();
      const res = await tokenRequest({ grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri });
      expect(res.status).toBe(400);
      expect(['invalid_grant', 'invalid_request']).toContain(res.body.error);
    });

    it('wrong code_verifier: invalid_grant', async () => {
      const c = await code();
      const res = await tokenRequest({ grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: oidc.randomPKCECodeVerifier() });
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it('wrong redirect_uri at the token endpoint: invalid_grant', async () => {
      const c = await code();
      const res = await tokenRequest({ grant_type: 'authorization_code', code: c.code, redirect_uri: `${rp.base}/other`, code_verifier: c.verifier });
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it('a code used twice: invalid_grant the second time', async () => {
      const c = await code();
      const body = { grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: c.verifier };
      expect((await tokenRequest(body)).status).toBe(200);
      expect(await tokenRequest(body)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it('a wrong client secret at the token endpoint: invalid_client', async () => {
      const c = await code();
      const res = await fetch(`${sut.url}/connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('collect-web:nope').toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: c.verifier }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    });

    it('client credentials by a code client: unauthorized_client', async () => {
      const res = await tokenRequest({ grant_type: 'client_credentials', scope: 'read' });
      expect(res).toMatchObject({ status: 400, body: { error: 'unauthorized_client' } });
    });
  });
});
