import * as oidc from 'openid-client';
import { freePort, freshTestDatabase } from '@collect/testing';
import { CallbackServer } from './support/callback-server.js';
import { FormLogin } from './support/form-login.js';
import { DEV_SEED, startTestCasApp } from './test-app.js';

describe('cas restart', () => {
  it('loses no session, grant or refresh token', async () => {
    const rp = await new CallbackServer().start();
    const port = await freePort();
    const env = {
      CAS_DATABASE_URL: await freshTestDatabase('cas_restart'),
      CAS_PORT: String(port),
      CAS_ISSUER: `http://127.0.0.1:${port}`,
      CAS_DEV_SEED_FILE: DEV_SEED,
      CAS_DEV_COLLECT_WEB_REDIRECT_URI: `${rp.base}/auth/callback`,
    };
    const discover = (url: string) => oidc.discovery(new URL(url), 'collect-web', 'collect-web-secret', undefined, { execute: [oidc.allowInsecureRequests] });
    const authorize = async (config: oidc.Configuration, browser: FormLogin) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${rp.base}/auth/callback`, scope: 'openid read', state: 'st',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const callback = await browser.authorize(url.href, 'demo', 'demo-password');
      return oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' });
    };

    const browser = new FormLogin(`http://127.0.0.1:${port}`);
    let sut = await startTestCasApp(env);
    let first: oidc.TokenEndpointResponse;
    let kid: { keys: Array<{ kid: string }> };
    try {
      first = await authorize(await discover(sut.url), browser);
      kid = (await (await fetch(`${sut.url}/.well-known/openid-configuration/jwks`)).json()) as { keys: Array<{ kid: string }> };
    } finally {
      await sut.close();
    }

    sut = await startTestCasApp(env);
    try {
      const config = await discover(sut.url);
      // Same signing key after restart.
      const after = (await (await fetch(`${sut.url}/.well-known/openid-configuration/jwks`)).json()) as { keys: Array<{ kid: string }> };
      expect(after.keys.map((k) => k.kid)).toEqual(kid.keys.map((k) => k.kid));
      // The refresh token from before the restart still works.
      const refreshed = await oidc.refreshTokenGrant(config, first.refresh_token!);
      expect(refreshed.access_token).toEqual(expect.any(String));
      // The browser session and the grant survived: no login form, no consent, straight back with a code.
      const trailBefore = browser.trail.length;
      const again = await authorize(config, browser);
      expect(again.access_token).toEqual(expect.any(String));
      expect(browser.trail.length).toBe(trailBefore); // no page was rendered on the way
    } finally {
      await sut.close();
      await rp.close();
    }
  });
});
