import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freshTestDatabase, startServiceProcess } from '@collect/testing';
import { DataSource } from 'typeorm';
import { AccountsService } from '../src/accounts/accounts.service.js';
import { hashClientSecret } from '../src/clients/client-secret.js';
import { ClientsService } from '../src/clients/clients.service.js';
import { SeedService } from '../src/clients/seed.service.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

function writeSeed(doc: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cas-seed-')), 'seed.json');
  writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return path;
}

describe('cas seed import', () => {
  let sut: TestCasApp;
  const extra = {
    resources: [{ name: 'reports', scopes: ['reports.read'] }],
    clients: [{ client_id: 'reports-bot', client_secret: 'reports-bot-secret', grant_types: ['client_credentials'], scopes: ['reports.read'], resources: ['reports'] }],
    users: [{ username: 'alice', password: 'alice-password', email: 'alice@example.org', given_name: 'Alice', family_name: 'Liddell' }],
  };

  beforeAll(async () => {
    sut = await startTestCasApp({
      CAS_DEV_SEED_FILE: DEV_SEED,
      CAS_SEED_FILE: writeSeed(extra),
      CAS_DEV_COLLECT_WEB_REDIRECT_URI: 'http://localhost:3999/auth/callback',
    });
  });
  afterAll(() => sut.close());

  it('loads the dev seed and CAS_SEED_FILE together', async () => {
    const clients = sut.app.get(ClientsService);
    const accounts = sut.app.get(AccountsService);
    expect((await clients.findResource('collect-api'))?.scopes).toEqual(['read', 'write', 'groups']);
    expect((await clients.findResource('cas-api'))?.scopes).toEqual(['adminui-api-wrapper', 'adminui-api-wrapper.users.search']);
    const machine = await clients.findClient('demo-machine');
    expect(machine?.secretHash).toBe(hashClientSecret('demo-machine-secret'));
    expect(machine?.resources).toEqual(['collect-api']);
    expect((await clients.findClient('reports-bot'))?.scopes).toEqual(['reports.read']);
    const demo = await accounts.findByUsername('demo');
    expect(demo).toMatchObject({ email: 'demo@example.org', givenName: 'Demo', familyName: 'User', enabled: true });
    expect(demo?.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await accounts.checkCredentials('alice', 'alice-password')).toMatchObject({ username: 'alice' });
  });

  it('registers the launcher-given callback for collect-web', async () => {
    const web = await sut.app.get(ClientsService).findClient('collect-web');
    expect(web?.redirectUris).toEqual(['http://localhost:3999/auth/callback']);
    expect(web?.postLogoutRedirectUris).toEqual(['http://localhost:3999/']);
  });

  it('is idempotent: applying the same seeds again changes no row', async () => {
    const ds = sut.app.get(DataSource);
    const snapshot = async () => ({
      users: await ds.query('SELECT id, username, password_hash, updated_at FROM cas_accounts ORDER BY username'),
      clients: await ds.query('SELECT client_id, secret_hash FROM cas_clients ORDER BY client_id'),
      resources: await ds.query('SELECT name, scopes FROM cas_resources ORDER BY name'),
    });
    const before = await snapshot();
    await sut.app.get(SeedService).onModuleInit();
    const after = await snapshot();
    expect(after.clients).toEqual(before.clients);
    expect(after.resources).toEqual(before.resources);
    expect(after.users.map((u: { id: string; password_hash: string }) => [u.id, u.password_hash])).toEqual(
      before.users.map((u: { id: string; password_hash: string }) => [u.id, u.password_hash]),
    );
  });

  it.each([
    ['not JSON', '{nope', /not JSON/],
    ['a client with an unknown grant', { clients: [{ client_id: 'x', grant_types: ['password'] }] }, /clients\.0\.grant_types\.0/],
    ['a public client with a secret', { clients: [{ client_id: 'x', client_secret: 'abcdefghij', grant_types: ['authorization_code'], redirect_uris: ['http://localhost/cb'], token_endpoint_auth_method: 'none' }] }, /public client/],
    ['a client whose resource does not exist', { clients: [{ client_id: 'x', client_secret: 'abcdefghij', grant_types: ['client_credentials'], resources: ['nope'] }] }, /unknown resource/],
    ['a client scope of no resource', { clients: [{ client_id: 'x', client_secret: 'abcdefghij', grant_types: ['client_credentials'], resources: ['collect-api'], scopes: ['admin'] }] }, /belong to none/],
  ])('refuses %s with a clear message', async (_label, doc, message) => {
    const seeds = sut.app.get(SeedService);
    await expect(seeds.readSeed(writeSeed(doc)).then((s) => seeds.apply(s))).rejects.toThrow(message);
  });

  it('refuses a missing seed file by path', async () => {
    await expect(sut.app.get(SeedService).readSeed('/nonexistent/seed.json')).rejects.toThrow(/cannot read seed file \(ENOENT\)/);
  });

  it('stops the service process with exit 78 and the seed problem when CAS_SEED_FILE is bad', async () => {
    const port = await freePort();
    const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
    const env = { NODE_ENV: 'test', CAS_PORT: String(port), CAS_HOST: '127.0.0.1', CAS_DATABASE_URL: await freshTestDatabase('cas_badseed'), CAS_SEED_FILE: writeSeed({ clients: [{ client_id: 'x' }] }) };
    await expect(startServiceProcess(main, env, port, 20_000)).rejects.toThrow(/exited with 78[\s\S]*clients\.0\.grant_types/);
  });
});
