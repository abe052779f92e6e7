import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import request from 'supertest';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

describe('cas client credentials (openid-client as the relying party)', () => {
  let sut: TestCasApp;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  const discover = (clientId: string, secret: string, auth = oidc.ClientSecretBasic(secret)) =>
    oidc.discovery(new URL(sut.url), clientId, secret, auth, { execute: [oidc.allowInsecureRequests] });

  beforeAll(async () => {
    sut = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED });
    jwks = createRemoteJWKSet(new URL(`${sut.url}/.well-known/openid-configuration/jwks`));
  });
  afterAll(() => sut.close());

  it('publishes discovery with the /connect endpoints and a JWKS', async () => {
    const doc = (await request(sut.url).get('/.well-known/openid-configuration').expect(200)).body;
    expect(doc).toMatchObject({
      issuer: sut.url,
      token_endpoint: `${sut.url}/connect/token`,
      authorization_endpoint: `${sut.url}/connect/authorize`,
      userinfo_endpoint: `${sut.url}/connect/userinfo`,
      end_session_endpoint: `${sut.url}/connect/endsession`,
      revocation_endpoint: `${sut.url}/connect/revocation`,
      introspection_endpoint: `${sut.url}/connect/introspect`,
      jwks_uri: `${sut.url}/.well-known/openid-configuration/jwks`,
      code_challenge_methods_supported: ['S256'],
    });
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'implicit', 'client_credentials', 'refresh_token']));
    expect(doc.grant_types_supported).not.toContain('password');
    const set = (await request(sut.url).get('/.well-known/openid-configuration/jwks').expect(200)).body;
    expect(set.keys).toHaveLength(1);
    expect(set.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(set.keys[0]).not.toHaveProperty('d'); // never the private part
  });

  it('keeps health and docs routes working beside the provider', async () => {
    await request(sut.url).get('/health/ready').expect(200);
    await request(sut.url).get('/docs-json').expect(200);
  });

  it.each([
    ['client_secret_basic', oidc.ClientSecretBasic('demo-machine-secret')],
    ['client_secret_post', oidc.ClientSecretPost('demo-machine-secret')],
  ])('issues an RS256 JWT for collect-api (%s) that verifies against the JWKS', async (_m, auth) => {
    const config = await discover('demo-machine', 'demo-machine-secret', auth);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read write' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('read write');
    const header = decodeProtectedHeader(tokens.access_token);
    expect(header).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    expect(header.kid).toEqual(expect.any(String));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: sut.url, audience: 'collect-api', algorithms: ['RS256'] });
    expect(payload).toMatchObject({ iss: sut.url, sub: 'demo-machine', aud: 'collect-api', client_id: 'demo-machine', scope: 'read write' });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(payload.jti).toEqual(expect.any(String));
  });

  it('gives demo-onboarding a cas-api token with both admin scopes', async () => {
    const config = await discover('demo-onboarding', 'demo-onboarding-secret');
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' });
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: sut.url, audience: 'cas-api' });
    expect(payload.scope).toBe('adminui-api-wrapper adminui-api-wrapper.users.search');
  });

  it('grants every allowed scope when none is asked for', async () => {
    const res = await request(sut.url).post('/connect/token').auth('demo-machine', 'demo-machine-secret').type('form').send({ grant_type: 'client_credentials' }).expect(200);
    expect(res.body.scope).toBe('read write');
  });

  it('accepts an explicit resource indicator', async () => {
    const res = await request(sut.url).post('/connect/token').auth('demo-machine', 'demo-machine-secret').type('form')
      .send({ grant_type: 'client_credentials', scope: 'read', resource: 'urn:cas:resource:collect-api' }).expect(200);
    expect(res.body.scope).toBe('read');
  });

  describe('refusals (standard OAuth errors)', () => {
    const token = (body: Record<string, string>, user = 'demo-machine', pass = 'demo-machine-secret') =>
      request(sut.url).post('/connect/token').auth(user, pass).type('form').send(body);

    it('wrong client secret: 401 invalid_client', async () => {
      const res = await token({ grant_type: 'client_credentials', scope: 'read' }, 'demo-machine', 'wrong').expect(401);
      expect(res.body.error).toBe('invalid_client');
    });
    it('unknown client: 401 invalid_client', async () => {
      expect((await token({ grant_type: 'client_credentials' }, 'nobody', 'x').expect(401)).body.error).toBe('invalid_client');
    });
    it('unknown scope: invalid_scope, not silently dropped', async () => {
      expect((await token({ grant_type: 'client_credentials', scope: 'read admin' }).expect(400)).body.error).toBe('invalid_scope');
    });
    it('a scope of another resource: invalid_scope', async () => {
      expect((await token({ grant_type: 'client_credentials', scope: 'adminui-api-wrapper' }).expect(400)).body.error).toBe('invalid_scope');
    });
    it('a resource the client may not use: invalid_target', async () => {
      expect((await token({ grant_type: 'client_credentials', resource: 'urn:cas:resource:cas-api' }).expect(400)).body.error).toBe('invalid_target');
    });
    it('password grant: unsupported_grant_type', async () => {
      expect((await token({ grant_type: 'password', username: 'demo', password: 'demo-password' }).expect(400)).body.error).toBe('unsupported_grant_type');
    });
    it('device code grant: unsupported_grant_type', async () => {
      expect((await token({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'x' }).expect(400)).body.error).toBe('unsupported_grant_type');
    });
    it('token exchange: unsupported_grant_type', async () => {
      expect((await token({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange' }).expect(400)).body.error).toBe('unsupported_grant_type');
    });
    it('a code grant by a client-credentials client: unauthorized_client', async () => {
      expect((await token({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://localhost/cb', code_verifier: 'a'.repeat(43) }).expect(400)).body.error).toBe('unauthorized_client');
    });
    it('a JSON body: 400 invalid_request', async () => {
      const res = await request(sut.url).post('/connect/token').auth('demo-machine', 'demo-machine-secret').send({ grant_type: 'client_credentials' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });
});
