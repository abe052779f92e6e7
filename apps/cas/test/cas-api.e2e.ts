import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { CasUser, CasUserPage } from '@collect/contracts';
import { JwtValidationError, JwtValidator } from '@collect/jwt-validation';
import { KeyStoreService } from '../src/oidc/key-store.service.js';
import { OidcService } from '../src/oidc/oidc.service.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

const SEARCH_SCOPES = 'adminui-api-wrapper adminui-api-wrapper.users.search';

function writeSeed(doc: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cas-api-seed-')), 'seed.json');
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

/**
 * cas-api end to end with tokens from the real CAS (oidc-provider, client credentials,
 * openid-client as the caller), validated by libs/jwt-validation through discovery + JWKS.
 */
describe('cas-api (user on-boarding, spec §5.3)', () => {
  let cas: TestCasApp;
  const token = async (clientId: string, secret: string, scope?: string) => {
    const config = await oidc.discovery(new URL(cas.url), clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests] });
    return (await oidc.clientCredentialsGrant(config, scope ? { scope } : {})).access_token;
  };
  const get = (path: string, bearer?: string) => {
    const req = request(cas.url).get(path);
    return bearer ? req.set('Authorization', `Bearer ${bearer}`) : req;
  };

  beforeAll(async () => {
    cas = await startTestCasApp({
      CAS_DEV_SEED_FILE: DEV_SEED,
      CAS_SEED_FILE: writeSeed({
        clients: [
          // Holds only one of the two scopes user search needs.
          { client_id: 'half-admin', client_secret: 'half-admin-secret', grant_types: ['client_credentials'], scopes: ['adminui-api-wrapper'], resources: ['cas-api'] },
        ],
      }),
    });
    const ds = cas.app.get(DataSource);
    await ds.query(
      `INSERT INTO cas_accounts (username, email, given_name, family_name)
       SELECT 'field' || lpad(i::text, 2, '0'), 'field' || i || '@agency.example', 'Field', 'Worker ' || i FROM generate_series(1, 45) AS i`,
    );
  });
  afterAll(() => cas?.close());

  it('on-boarding: client credentials with demo-onboarding → search → page through every result → fetch one', async () => {
    const access = await token('demo-onboarding', 'demo-onboarding-secret', SEARCH_SCOPES);
    const seen: CasUser[] = [];
    let next: string | null = '/api/users?search=AGENCY&page_size=20';
    let pages = 0;
    while (next) {
      const res = await get(next.replace(cas.url, ''), access).expect(200);
      const page = res.body as CasUserPage;
      expect(page.count).toBe(45);
      seen.push(...page.results);
      if (page.next) expect(page.next.startsWith(`${cas.url}/api/users?`)).toBe(true);
      next = page.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(new Set(seen.map((u) => u.id)).size).toBe(45);

    const demo = (await get('/api/users?username=demo', access).expect(200)).body as CasUserPage;
    expect(demo.results).toEqual([
      expect.objectContaining({ username: 'demo', email: 'demo@example.org', given_name: 'Demo', family_name: 'User', name: 'Demo User', enabled: true }),
    ]);
    const one = await get(`/api/users/${demo.results[0].id}`, access).expect(200);
    expect(one.body).toEqual(demo.results[0]);
    await get('/api/users/00000000-0000-0000-0000-000000000000', access).expect(404, { detail: 'Not found.' });
    const byEmail = (await get('/api/users?email=DEMO@example.org', access).expect(200)).body as CasUserPage;
    expect(byEmail.count).toBe(1);
  });

  it('bad query parameters answer 400 with field errors, a page past the end 404', async () => {
    const access = await token('demo-onboarding', 'demo-onboarding-secret', SEARCH_SCOPES);
    const bad = await get('/api/users?page=0&page_size=x', access).expect(400);
    expect(Object.keys(bad.body).sort()).toEqual(['page', 'page_size']);
    await get('/api/users?page=99', access).expect(404, { detail: 'Invalid page.' });
    expect((await get('/api/users?page_size=500', access).expect(200)).body.results.length).toBe(46);
  });

  describe('permissions (every endpoint)', () => {
    const endpoints = ['/api/users', '/api/users?search=demo', '/api/users/00000000-0000-0000-0000-000000000000'];

    it('no token: 401 with WWW-Authenticate: Bearer', async () => {
      for (const path of endpoints) {
        const res = await get(path).expect(401);
        expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
    });

    it('a user password (Basic) is not accepted: 401', async () => {
      for (const path of endpoints) await request(cas.url).get(path).auth('demo', 'demo-password').expect(401);
    });

    it('wrong audience (a collect-api token of this CAS): 401 naming the audience', async () => {
      const access = await token('demo-machine', 'demo-machine-secret', 'read write');
      for (const path of endpoints) {
        const res = await get(path, access).expect(401);
        expect(res.body.detail).toBe('Token audience does not include "cas-api".');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
      }
    });

    it('wrong scope (cas-api audience, only adminui-api-wrapper): 403 naming the missing scope', async () => {
      const access = await token('half-admin', 'half-admin-secret');
      for (const path of endpoints) {
        const res = await get(path, access).expect(403);
        expect(res.body).toEqual({ detail: 'Token lacks the required scope: adminui-api-wrapper.users.search.' });
        expect(res.headers['www-authenticate']).toMatch(/error="insufficient_scope"/);
      }
    });

    it('a CAS token whose payload was altered (scope added): 401 signature invalid', async () => {
      const access = await token('half-admin', 'half-admin-secret');
      const [h, p, s] = access.split('.');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: SEARCH_SCOPES })).toString('base64url')}.${s}`;
      const res = await get('/api/users', forged).expect(401);
      expect(res.body.detail).toBe('Token signature is invalid.');
    });

    it('a token of another CAS (other issuer, other keys): 401', async () => {
      const other = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED });
      try {
        const config = await oidc.discovery(new URL(other.url), 'demo-onboarding', 'demo-onboarding-secret', oidc.ClientSecretBasic('demo-onboarding-secret'), { execute: [oidc.allowInsecureRequests] });
        const foreign = (await oidc.clientCredentialsGrant(config, { scope: SEARCH_SCOPES })).access_token;
        const res = await get('/api/users', foreign).expect(401);
        expect(res.body.detail).toMatch(/key id .* is not published|issuer/);
      } finally {
        await other.close();
      }
    });

    it('valid: demo-onboarding token with both scopes answers 200 on every endpoint but an unknown id (404)', async () => {
      const access = await token('demo-onboarding', 'demo-onboarding-secret', SEARCH_SCOPES);
      await get(endpoints[0], access).expect(200);
      await get(endpoints[1], access).expect(200);
      await get(endpoints[2], access).expect(404);
    });
  });

  describe('libs/jwt-validation against the real CAS', () => {
    it('accepts its tokens, refuses them for another audience, and picks up a rotated key without restart', async () => {
      let offset = 0;
      const now = () => Date.now() + offset;
      const validator = new JwtValidator({ issuer: cas.url, audience: 'cas-api', typ: 'at+jwt', now });
      const before = await token('demo-onboarding', 'demo-onboarding-secret', SEARCH_SCOPES);
      const verified = await validator.verify(before);
      expect(verified).toMatchObject({ subject: 'demo-onboarding', clientId: 'demo-onboarding', scopes: SEARCH_SCOPES.split(' '), header: { alg: 'RS256' } });
      await expect(new JwtValidator({ issuer: cas.url, audience: 'collect-api' }).verify(before)).rejects.toMatchObject({ code: 'audience_mismatch' });

      const newKid = await cas.app.get(KeyStoreService).rotate('test');
      await cas.app.get(OidcService).reload();
      const after = await token('demo-onboarding', 'demo-onboarding-secret', SEARCH_SCOPES);
      expect(JSON.parse(Buffer.from(after.split('.')[0], 'base64url').toString()).kid).toBe(newKid);
      // Inside the 30 s cooldown since the last fetch the new kid is not fetched yet...
      await expect(validator.verify(after)).rejects.toBeInstanceOf(JwtValidationError);
      offset += 31_000;
      // ...after it, one refetch picks it up; the previous key stays published for older tokens.
      await expect(validator.verify(after)).resolves.toMatchObject({ header: { kid: newKid } });
      await expect(validator.verify(before)).resolves.toBeDefined();
      expect(validator.getStats()).toMatchObject({ discoveryFetches: 1, jwksFetches: 2 });
    });
  });
});
