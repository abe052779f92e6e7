import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { createUser } from './support/accounts.js';
import type { CallbackServer } from './support/callback-server.js';
import { FormLogin, formAction } from './support/form-login.js';
import { startCasWithRelyingParty } from './support/relying-party.js';
import type { TestCasApp } from './test-app.js';

/**
 * Races and token boundaries on the CAS, over real HTTP: every check-then-act on a secret is
 * atomic (login lockout, code and refresh token redemption), a client introspects only its own
 * tokens, and cas-api refuses tokens a user obtained.
 */
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('cas security: races and token boundaries', () => {
  let sut: TestCasApp;
  let rp: CallbackServer;
  let redirectUri: string;

  beforeAll(async () => {
    // A web app whose users may ask for cas-api scopes: the kind of token cas-api must refuse.
    ({ sut, rp, redirectUri } = await startCasWithRelyingParty(({ redirectUri: callback }) => [{
      client_id: 'admin-web', client_secret: 'admin-web-secret', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      scopes: ['openid', 'offline_access', 'adminui-api-wrapper', 'adminui-api-wrapper.users.search'], resources: ['cas-api'],
      redirect_uris: [callback], token_endpoint_auth_method: 'client_secret_basic',
    }], {
      // Every test here logs in from 127.0.0.1: the per-address lockout stays out of the way.
      CAS_LOGIN_MAX_FAILURES_PER_IP: '1000', RATE_LIMIT_LOGIN_PER_IP: '100000',
    }));
  });
  afterAll(async () => {
    await sut?.close();
    await rp?.close();
  });

  const token = (client: [string, string], body: Record<string, string>) =>
    fetch(`${sut.url}/connect/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(...client) }, body: new URLSearchParams(body) })
      .then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));

  /** A code of `client` for the demo user, through the real login and consent pages. */
  async function code(clientId: string, scope: string): Promise<{ code: string; verifier: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = new URL(`${sut.url}/connect/authorize`);
    url.search = new URLSearchParams({
      client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope, state: 's', prompt: 'consent',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).toString();
    const callback = await new FormLogin(sut.url).authorize(url.href, 'demo', 'demo-password');
    const c = callback.searchParams.get('code');
    if (!c) throw new Error(`no code: ${callback.href}`);
    return { code: c, verifier };
  }

  const WEB: [string, string] = ['collect-web', 'collect-web-secret'];

  it('login lockout: 12 parallel wrong passwords for one user get at most CAS_LOGIN_MAX_FAILURES_PER_USER (5) checks', async () => {
    await createUser(sut, 'race-target', 'right-password');
    const url = new URL(`${sut.url}/connect/authorize`);
    url.search = new URLSearchParams({
      client_id: 'collect-web', response_type: 'code', redirect_uri: redirectUri, scope: 'openid read', state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    }).toString();
    const driver = new FormLogin(sut.url);
    const action = formAction((await driver.follow(url.href)).body, '/login')!;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => driver.submit(action, { username: 'race-target', password: `wrong-${i}` })));
    const checked = answers.filter((a) => a.status === 401).length;
    expect(checked).toBeGreaterThan(0);
    expect(checked).toBeLessThanOrEqual(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(12 - checked);
    // Locked: the right password is refused too.
    expect((await driver.submit(action, { username: 'race-target', password: 'right-password' })).status).toBe(429);
  });

  it('one authorization code redeemed by 10 parallel token requests: exactly one gets tokens, the grant is then revoked', async () => {
    const c = await code('collect-web', 'openid offline_access read');
    const body = { grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: c.verifier };
    const answers = await Promise.all(Array.from({ length: 10 }, () => token(WEB, body)));
    const winners = answers.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400 && a.body.error === 'invalid_grant')).toHaveLength(9);
    // A code presented twice may be stolen (RFC 6749 §4.1.2): the winner's refresh token is revoked with the grant.
    expect((await token(WEB, { grant_type: 'refresh_token', refresh_token: winners[0].body.refresh_token })).status).toBe(400);
  });

  it('one refresh token redeemed by 10 parallel requests: exactly one gets new tokens', async () => {
    const c = await code('collect-web', 'openid offline_access read');
    const first = await token(WEB, { grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: c.verifier });
    expect(first.status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 10 }, () => token(WEB, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400 && a.body.error === 'invalid_grant')).toHaveLength(9);
  });

  it('introspection: a confidential client learns nothing about another client\'s tokens, its own are active', async () => {
    const c = await code('collect-web', 'openid offline_access read');
    const tokens = await token(WEB, { grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: c.verifier });
    const introspect = (client: [string, string]) =>
      fetch(`${sut.url}/connect/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(...client) }, body: new URLSearchParams({ token: tokens.body.refresh_token }) })
        .then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    expect(await introspect(['demo-machine', 'demo-machine-secret'])).toEqual({ status: 200, body: { active: false } });
    expect(await introspect(['demo-onboarding', 'demo-onboarding-secret'])).toEqual({ status: 200, body: { active: false } });
    const own = await introspect(WEB);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ active: true, client_id: 'collect-web' });
  });

  it('cas-api: a user\'s token with the cas-api audience and scopes is 403; a client-credentials token is served', async () => {
    const c = await code('admin-web', 'openid adminui-api-wrapper adminui-api-wrapper.users.search');
    const user = await token(['admin-web', 'admin-web-secret'], { grant_type: 'authorization_code', code: c.code, redirect_uri: redirectUri, code_verifier: c.verifier });
    expect(user.status).toBe(200);
    expect(decodeJwt(user.body.access_token)).toMatchObject({ aud: 'cas-api', scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' });
    const asUser = await fetch(`${sut.url}/api/users?username=demo`, { headers: { authorization: `Bearer ${user.body.access_token}` } });
    expect(asUser.status).toBe(403);
    expect(await asUser.json()).toEqual({ detail: 'cas-api accepts only tokens of the client credentials grant.' });

    const machine = await token(['demo-onboarding', 'demo-onboarding-secret'], { grant_type: 'client_credentials' });
    expect(decodeJwt(machine.body.access_token)).toMatchObject({ sub: 'demo-onboarding', client_id: 'demo-onboarding', gty: 'client_credentials' });
    const asMachine = await fetch(`${sut.url}/api/users?username=demo`, { headers: { authorization: `Bearer ${machine.body.access_token}` } });
    expect(asMachine.status).toBe(200);
    expect(((await asMachine.json()) as { count: number }).count).toBe(1);
    // No token at all is still a 401 from the bearer guard, which runs first.
    expect((await fetch(`${sut.url}/api/users`)).status).toBe(401);
  });
});
