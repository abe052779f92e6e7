import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import request from 'supertest';
import { LocalIssuer, generateSigningKey, signCompact } from '../../../libs/jwt-validation/src/testing/local-issuer.js';
import { FormLogin } from '../../cas/test/support/form-login.js';
import { CasApiClient } from '../src/onboarding/cas-api.client.js';
import { casSigningKey, casUserId, machineToken, startCasEnv, type CasEnv } from './cas-env.js';
import { createTestUser, type TestUser } from './test-users.js';

const FORM = { id_string: 'cas_shared', title: 'Shared with a machine', fields: [{ name: 'q', type: 'text', label: 'Q' }] };

describe('collect-api accepts CAS Bearer tokens (real CAS process) and on-boards CAS users', () => {
  let env: CasEnv;
  let plain: TestUser;
  let issuer: string;

  beforeAll(async () => {
    env = await startCasEnv();
    issuer = env.collect.config.CAS_ISSUER;
    plain = await createTestUser(env.collect.app);
  });
  afterAll(() => env?.close());

  const api = () => request(env.collect.url);
  const asAdmin = (r: request.Test) => r.set('Authorization', env.admin.token);
  const bearer = (token: string) => `Bearer ${token}`;

  /** A user access token from the CAS through the collect-web code flow (the test plays the client). */
  async function userToken(username: string, password: string): Promise<string> {
    return (await userTokens(username, password)).access_token;
  }

  async function userTokens(username: string, password: string) {
    const web = await env.client('collect-web', 'collect-web-secret');
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(web, {
      redirect_uri: `${env.collect.config.PUBLIC_BASE_URL}/auth/callback`,
      scope: 'openid read write',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'st',
    });
    const callback = await new FormLogin(env.cas.url).authorize(url.href, username, password);
    return oidc.authorizationCodeGrant(web, callback, { pkceCodeVerifier: verifier, expectedState: 'st' });
  }

  describe('service accounts (client credentials)', () => {
    it('refuses a demo-machine token with 403 until an admin links the client, then reads /api/v1/user as it', async () => {
      const token = await machineToken(env);
      const before = await api().get('/api/v1/user').set('Authorization', bearer(token)).expect(403);
      expect(before.body.detail).toMatch(/'demo-machine' is not linked to a service account/);

      const created = await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: 'demo-machine' }).expect(201);
      expect(created.body).toMatchObject({ username: 'demo-machine', client_id: 'demo-machine', is_active: true });
      await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: 'demo-machine' }).expect(200);
      expect((await asAdmin(api().get('/api/v1/service-accounts')).expect(200)).body.map((a: { client_id: string }) => a.client_id)).toEqual(['demo-machine']);

      const me = await api().get('/api/v1/user').set('Authorization', bearer(token)).expect(200);
      expect(me.body.username).toBe('demo-machine');
    });

    it('maps scopes to rights: read for GET, write for changes', async () => {
      const readOnly = await machineToken(env, 'read');
      await api().get('/api/v1/user').set('Authorization', bearer(readOnly)).expect(200);
      const refused = await api().post('/api/v1/oauth-applications').set('Authorization', bearer(readOnly))
        .send({ name: 'x', client_type: 'confidential', redirect_uris: 'https://x.example/cb' }).expect(403);
      expect(refused.body.detail).toBe('An access token cannot reveal or create credentials; use Basic, Token or TempToken authentication.');
      const write = await api().post('/api/v1/forms').set('Authorization', bearer(readOnly)).send({ ...FORM, id_string: 'machine_form' }).expect(403);
      expect(write.body.detail).toBe("The access token lacks the 'write' scope.");
      await api().post('/api/v1/forms').set('Authorization', bearer(await machineToken(env, 'read write'))).send({ ...FORM, id_string: 'machine_form' }).expect(201);
    });

    it('sees a form once an admin-shared role grants it, like any user', async () => {
      const token = bearer(await machineToken(env));
      const formId = (await asAdmin(api().post('/api/v1/forms')).send(FORM).expect(201)).body.formid;
      await api().get(`/api/v1/forms/${formId}`).set('Authorization', token).expect(404);
      await asAdmin(api().put(`/api/v1/forms/${formId}/share`)).send({ username: 'demo-machine', role: 'readonly' }).expect(204);
      await api().get(`/api/v1/forms/${formId}`).set('Authorization', token).expect(200);
    });

    it('refuses with 401 a wrong audience, an expired token, another issuer, an unknown key or a forged signature', async () => {
      // Control first: a token minted here with the CAS's own key and good claims is accepted, so each refusal below has one cause.
      const { kid, key } = await casSigningKey(env);
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: issuer, aud: 'collect-api', sub: 'demo-machine', client_id: 'demo-machine', scope: 'read write', iat: now, exp: now + 300, jti: randomUUID() };
      const header = { alg: 'RS256', kid, typ: 'at+jwt' };
      await api().get('/api/v1/user').set('Authorization', bearer(signCompact(header, claims, key))).expect(200);

      const onboarding = await oidc.clientCredentialsGrant(await env.client('demo-onboarding', 'demo-onboarding-secret'), { scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' });
      const wrongAud = await api().get('/api/v1/user').set('Authorization', bearer(onboarding.access_token)).expect(401);
      expect(wrongAud.body.detail).toMatch(/aud/i);
      expect(wrongAud.headers['www-authenticate']).toMatch(/^Bearer/);

      const expired = await api().get('/api/v1/user').set('Authorization', bearer(signCompact(header, { ...claims, iat: now - 7200, exp: now - 3600 }, key))).expect(401);
      expect(expired.body.detail).toMatch(/expired/i);

      const other = await LocalIssuer.start();
      try {
        const foreign = other.sign({ sub: 'demo-machine', client_id: 'demo-machine', scope: 'read write' }, { audience: 'collect-api' });
        await api().get('/api/v1/user').set('Authorization', bearer(foreign)).expect(401);
      } finally {
        await other.close();
      }

      const stranger = generateSigningKey('not-a-cas-key');
      const unknownKid = await api().get('/api/v1/user').set('Authorization', bearer(signCompact({ ...header, kid: 'not-a-cas-key' }, claims, stranger.privateKey))).expect(401);
      expect(unknownKid.body.detail).toMatch(/key|kid/i);
      const forged = await api().get('/api/v1/user').set('Authorization', bearer(signCompact(header, claims, stranger.privateKey))).expect(401);
      expect(forged.body.detail).toMatch(/signature/i);
    });

    it('stops accepting the client once its service account is removed', async () => {
      const token = bearer(await machineToken(env));
      await asAdmin(api().delete('/api/v1/service-accounts/demo-machine')).expect(204);
      await api().get('/api/v1/user').set('Authorization', token).expect(403);
      await asAdmin(api().delete('/api/v1/service-accounts/demo-machine')).expect(204);
      await asAdmin(api().delete('/api/v1/service-accounts/no-such-client')).expect(404);
      await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: 'demo-machine' }).expect(200);
      await api().get('/api/v1/user').set('Authorization', token).expect(200);
    });
  });

  describe('on-boarding CAS users', () => {
    it('lets only platform admins use /api/v1/cas-users and /api/v1/service-accounts (401 anonymous, 403 others)', async () => {
      for (const [method, path] of [['get', '/api/v1/cas-users'], ['post', '/api/v1/cas-users'], ['delete', '/api/v1/cas-users/x'], ['get', '/api/v1/service-accounts'], ['post', '/api/v1/service-accounts'], ['delete', '/api/v1/service-accounts/x']] as const) {
        await api()[method](path).expect(401);
        await api()[method](path).set('Authorization', plain.token).expect(403);
      }
    });

    it('searches the CAS users with one cached client-credentials token', async () => {
      const client = env.collect.app.get(CasApiClient);
      const before = client.tokenRequests;
      const res = await asAdmin(api().get('/api/v1/cas-users')).query({ search: 'ali' }).expect(200);
      expect(res.body.count).toBe(1);
      expect(res.body.results[0]).toMatchObject({ username: 'alice', email: 'alice@example.org', onboarded: false, local_user: null });
      const all = await asAdmin(api().get('/api/v1/cas-users')).query({ page_size: '2' }).expect(200);
      expect(all.body.count).toBe(3);
      expect(all.body.next).toBe(`${env.collect.config.PUBLIC_BASE_URL}/api/v1/cas-users?page=2&page_size=2`);
      await asAdmin(api().get('/api/v1/cas-users')).query({ page: 'x' }).expect(400);
      expect(client.tokenRequests - before).toBe(1);
      await asAdmin(api().get('/api/v1/cas-users')).query({ search: 'mal' }).expect(200);
      expect(client.tokenRequests - before).toBe(1);
    });

    it('answers 403 to a valid token of a CAS user who is not on-boarded, 200 once on-boarded, 403 again when off-boarded', async () => {
      const aliceToken = bearer(await userToken('alice', 'alice-password'));
      const refused = await api().get('/api/v1/user').set('Authorization', aliceToken).expect(403);
      expect(refused.body.detail).toBe('Your central account is not on-boarded to this service; ask a platform administrator to give you access.');

      const aliceId = await casUserId(env, 'alice');
      const onboarded = await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: aliceId }).expect(201);
      expect(onboarded.body).toMatchObject({ username: 'alice', email: 'alice@example.org', first_name: 'Alice', last_name: 'Onboarded', cas_user_id: aliceId, is_active: true });
      await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: aliceId }).expect(200);
      const me = await api().get('/api/v1/user').set('Authorization', aliceToken).expect(200);
      expect(me.body.username).toBe('alice');
      const listed = await asAdmin(api().get('/api/v1/cas-users')).query({ search: 'alice' }).expect(200);
      expect(listed.body.results[0]).toMatchObject({ onboarded: true, local_user: { username: 'alice', is_active: true } });

      const mallory = await api().get('/api/v1/user').set('Authorization', bearer(await userToken('mallory', 'mallory-password'))).expect(403);
      expect(mallory.body.detail).toMatch(/not on-boarded/);

      await asAdmin(api().delete(`/api/v1/cas-users/${aliceId}`)).expect(204);
      await api().get('/api/v1/user').set('Authorization', aliceToken).expect(403);
      await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: aliceId }).expect(200);
      await api().get('/api/v1/user').set('Authorization', aliceToken).expect(200);

      // Her ID token, from the same issuer, is not an access token.
      const { id_token } = await userTokens('alice', 'alice-password');
      await api().get('/api/v1/user').set('Authorization', bearer(id_token!)).expect(401);
    });

    it('refuses bad on-boarding input with field errors and stores nothing', async () => {
      await asAdmin(api().post('/api/v1/cas-users')).send({}).expect(400, { cas_user_id: ['This field is required.'] });
      await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: 42 }).expect(400, { cas_user_id: ['Not a valid string.'] });
      await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: randomUUID() }).expect(400, { cas_user_id: ['No user with this id in the central authentication service.'] });
      const demoId = await casUserId(env, 'demo');
      await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: demoId, username: 'bad name!' }).expect(400);
      // The local name is taken by a password account: the admin picks another one.
      await createTestUser(env.collect.app, { username: 'demo' });
      const taken = await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: demoId }).expect(400);
      expect(taken.body.username[0]).toMatch(/already exists/);
      const renamed = await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: demoId, username: 'demo-cas' }).expect(201);
      expect(renamed.body.username).toBe('demo-cas');
      await asAdmin(api().delete(`/api/v1/cas-users/${randomUUID()}`)).expect(404);
      await asAdmin(api().post('/api/v1/service-accounts')).send({}).expect(400, { client_id: ['This field is required.'] });
      await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: 'has spaces' }).expect(400);
    });
  });

  describe('the credential rule (docs/security.md): no CAS token buys an unscoped credential', () => {
    async function expectNoCredential(token: string, username: string): Promise<void> {
      const me = await api().get('/api/v1/user').set('Authorization', bearer(token)).expect(200);
      expect(me.body.username).toBe(username);
      expect(me.body).not.toHaveProperty('api_token');
      expect(me.body).not.toHaveProperty('temp_token');
      await api().get('/api/v1/user/regenerate_auth_token').set('Authorization', bearer(token)).expect(403);
      await api().post('/api/v1/oauth-applications').set('Authorization', bearer(token)).send({ name: 'x', redirect_uris: 'https://x.example/cb' }).expect(403);
    }

    it('a read-only client-credentials token is refused a write and cannot read the api_token that would allow it', async () => {
      const linked = await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: 'demo-machine' });
      expect([200, 201]).toContain(linked.status);
      const read = await machineToken(env, 'read');
      await api().post('/api/v1/forms').set('Authorization', bearer(read)).send({ ...FORM, id_string: 'escalated' }).expect(403);
      await expectNoCredential(read, 'demo-machine');
      await expectNoCredential(await machineToken(env, 'read write'), 'demo-machine');
    });

    it('user tokens of the code flow and of the implicit flow: the same', async () => {
      const onboarded = await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: await casUserId(env, 'alice') });
      expect([200, 201]).toContain(onboarded.status);
      await expectNoCredential(await userToken('alice', 'alice-password'), 'alice');
      const implicit = await oidc.discovery(new URL(issuer), 'demo-implicit', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      const url = oidc.buildAuthorizationUrl(implicit, { redirect_uri: 'http://localhost:3000/implicit-callback', response_type: 'id_token token', scope: 'openid read', nonce: oidc.randomNonce(), state: 'st' });
      const callback = await new FormLogin(env.cas.url).authorize(url.href, 'alice', 'alice-password');
      const accessToken = new URLSearchParams(callback.hash.slice(1)).get('access_token');
      expect(accessToken).toBeTruthy();
      await expectNoCredential(accessToken!, 'alice');
    });
  });
});
