import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import pg from 'pg';
import * as oidc from 'openid-client';
import request from 'supertest';
import { freePort, freshTestDatabase, startServiceProcess, type ServiceProcess } from '@collect/testing';
import { FormLogin } from '../../cas/test/support/form-login.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

const CAS_MAIN = fileURLToPath(new URL('../../cas/dist/main.js', import.meta.url));
const DEV_SEED = fileURLToPath(new URL('../../cas/seed/dev-seed.json', import.meta.url));
/** Given to the CAS child so the test can read its signing key back (to craft an expired token with it). */
const KEY_ENCRYPTION_KEY = 'cas-integration-test-key-encryption';

/** CAS users beside the dev seed's `demo`: one to on-board, one that never is. */
export const CAS_TEST_USERS = [
  { username: 'alice', password: 'alice-password', email: 'alice@example.org', given_name: 'Alice', family_name: 'Onboarded', enabled: true },
  { username: 'mallory', password: 'mallory-password', email: 'mallory@example.org', given_name: 'Mallory', family_name: 'Stranger', enabled: true },
];

export interface CasEnv {
  cas: ServiceProcess;
  casDatabaseUrl: string;
  collect: TestCollectApp;
  admin: TestUser;
  /** Fresh openid-client configuration for a CAS client (the test acting as that client). */
  client(clientId: string, secret: string): Promise<oidc.Configuration>;
  close(): Promise<void>;
}

/**
 * The real CAS as a child process (built dist, dev seed plus CAS_TEST_USERS, its own database)
 * and collect-api in this process on a port chosen up front, so the CAS registers collect-api's
 * real callback (CAS_DEV_COLLECT_WEB_REDIRECT_URI, as `pnpm start` does).
 */
export async function startCasEnv(collectEnv: Record<string, string> = {}): Promise<CasEnv> {
  const casPort = await freePort();
  const collectPort = await freePort();
  const issuer = `http://127.0.0.1:${casPort}`;
  const collectUrl = `http://127.0.0.1:${collectPort}`;
  const seedDir = mkdtempSync(join(tmpdir(), 'cas-int-seed-'));
  writeFileSync(join(seedDir, 'seed.json'), JSON.stringify({ users: CAS_TEST_USERS }));
  const casDatabaseUrl = await freshTestDatabase('cas_int');
  const cas = await startServiceProcess(CAS_MAIN, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    CAS_PORT: String(casPort),
    CAS_HOST: '127.0.0.1',
    CAS_ISSUER: issuer,
    CAS_DATABASE_URL: casDatabaseUrl,
    CAS_DEV_SEED_FILE: DEV_SEED,
    CAS_SEED_FILE: join(seedDir, 'seed.json'),
    CAS_DEV_COLLECT_WEB_REDIRECT_URI: `${collectUrl}/auth/callback`,
    CAS_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
  }, casPort);
  let collect: TestCollectApp;
  try {
    collect = await startTestCollectApp({ PUBLIC_BASE_URL: collectUrl, CAS_ISSUER: issuer, ...collectEnv }, collectPort);
  } catch (err) {
    await cas.stop();
    rmSync(seedDir, { recursive: true, force: true });
    throw err;
  }
  const admin = await createTestUser(collect.app, { superuser: true });
  return {
    cas,
    casDatabaseUrl,
    collect,
    admin,
    client: (clientId, secret) => oidc.discovery(new URL(issuer), clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests] }),
    async close() {
      await collect.close();
      await cas.stop();
      rmSync(seedDir, { recursive: true, force: true });
    },
  };
}

/** A client-credentials access token of the dev seed's demo-machine (aud collect-api). */
export async function machineToken(env: CasEnv, scope = 'read write'): Promise<string> {
  const tokens = await oidc.clientCredentialsGrant(await env.client('demo-machine', 'demo-machine-secret'), { scope });
  return tokens.access_token;
}

/** The CAS user id (subject) of a username, found through collect-api's admin search. */
export async function casUserId(env: CasEnv, username: string): Promise<string> {
  const res = await request(env.collect.url).get('/api/v1/cas-users').query({ search: username }).set('Authorization', env.admin.token).expect(200);
  const found = (res.body.results as Array<{ id: string; username: string }>).find((u) => u.username === username);
  if (!found) throw new Error(`no CAS user ${username}`);
  return found.id;
}

/** The CAS's active signing key (private), read from its database and decrypted as the CAS does. */
export async function casSigningKey(env: CasEnv): Promise<{ kid: string; key: KeyObject }> {
  const { KeyEncryption } = await import('../../cas/src/oidc/key-encryption.js');
  const client = new pg.Client({ connectionString: env.casDatabaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT kid, private_key_enc FROM cas_signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`);
    const jwk = JSON.parse(new KeyEncryption(KEY_ENCRYPTION_KEY).decrypt(rows[0].private_key_enc));
    return { kid: rows[0].kid, key: createPrivateKey({ key: jwk, format: 'jwk' }) };
  } finally {
    await client.end();
  }
}


/**
 * The BFF sign-in over plain HTTP with one cookie jar (the same requests a browser makes):
 * collect-api /auth/login → CAS login + consent → the callback URL collect-api would receive.
 * The callback itself is not fetched, so tests can replay or steal it.
 */
export async function startSignInOverHttp(env: CasEnv, username: string, password: string, returnTo = '/login'): Promise<{ jar: FormLogin; callback: URL }> {
  const jar = new FormLogin(env.cas.url);
  const start = await jar.fetch(`${env.collect.url}/auth/login?return_to=${encodeURIComponent(returnTo)}`);
  if (start.status !== 302) throw new Error(`/auth/login answered ${start.status}`);
  const callback = await jar.authorize(start.headers.get('location')!, username, password);
  return { jar, callback };
}

/** Puts collect-api's own address on a callback URL (PUBLIC_BASE_URL and the test URL are the same host and port). */
export function onCollect(env: CasEnv, callback: URL): string {
  return `${env.collect.url}${callback.pathname}${callback.search}`;
}
