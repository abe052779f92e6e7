import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { runCli } from '../src/cli/run-cli.js';
import { loadCasConfig } from '../src/config/cas-config.js';
import { KeyEncryption } from '../src/oidc/key-encryption.js';
import { KeyStoreService } from '../src/oidc/key-store.service.js';
import { OidcService } from '../src/oidc/oidc.service.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

describe('cas signing keys', () => {
  let sut: TestCasApp;

  beforeAll(async () => {
    sut = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED, CAS_KEY_ENCRYPTION_KEY: 'test-key-encryption-key-0123456789' });
  });
  afterAll(() => sut.close());

  const jwks = async () => (await request(sut.url).get('/.well-known/openid-configuration/jwks').expect(200)).body as JSONWebKeySet;
  const token = async () =>
    (await request(sut.url).post('/connect/token').auth('demo-machine', 'demo-machine-secret').type('form').send({ grant_type: 'client_credentials', scope: 'read' }).expect(200)).body.access_token as string;
  const verify = async (jwt: string) => jwtVerify(jwt, createLocalJWKSet(await jwks()), { issuer: sut.url, audience: 'collect-api', algorithms: ['RS256'] });
  // The admin CLI in this process, through the binary's own entry and configuration from the
  // environment as the binary reads it (apps/cas/test/cli.e2e.ts runs the built binary itself).
  const withKeys = async (env: Record<string, string>, ...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const config = () => loadCasConfig({ ...process.env, CAS_DATABASE_URL: sut.config.CAS_DATABASE_URL, LOG_LEVEL: 'info', ...env });
    const status = await runCli(args, config, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { status, stdout, stderr };
  };
  const cli = (...args: string[]) => withKeys({ CAS_KEY_ENCRYPTION_KEY: sut.config.CAS_KEY_ENCRYPTION_KEY! }, ...args);

  it('creates one key on first start and stores the private part encrypted', async () => {
    const set = await jwks();
    expect(set.keys).toHaveLength(1);
    const rows = await sut.app.get(DataSource).query('SELECT kid, private_key_enc FROM cas_signing_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0].private_key_enc).toMatch(/^v1\./);
    expect(rows[0].private_key_enc).not.toContain('"d"');
    expect(() => new KeyEncryption('another-key-entirely-000').decrypt(rows[0].private_key_enc)).toThrow(/CAS_KEY_ENCRYPTION_KEY/);
  });

  it('rotation by command: old tokens still verify, new ones use the new kid; the old key leaves after its tokens expired', async () => {
    const before = await token();
    const oldKid = decodeProtectedHeader(before).kid;

    const run = await cli('keys', 'rotate');
    expect(run.status).toBe(0);
    const { kid: newKid } = JSON.parse(run.stdout.trim());
    expect(newKid).not.toBe(oldKid);
    const audit = run.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.event === 'key.rotated');
    expect(audit).toMatchObject({ kid: newKid, retired: [oldKid], reason: 'command' });
    await sut.app.get(OidcService).tick(); // what the running service does every CAS_KEY_CHECK_SECONDS

    expect((await jwks()).keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    await expect(verify(before)).resolves.toBeDefined();
    const after = await token();
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    await expect(verify(after)).resolves.toBeDefined();

    // Once the longest token lifetime (+ margin) has passed, the retired key is removed.
    const later = new Date(Date.now() + 2 * 3600 * 1000);
    await sut.app.get(KeyStoreService).maintain(later);
    await sut.app.get(OidcService).reload();
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([newKid]);
    await expect(verify(before)).rejects.toThrow(/no applicable key|JWKSNoMatchingKey|matching key/i);
    await expect(verify(after)).resolves.toBeDefined();
  });

  it('rotates on schedule once the active key is older than CAS_KEY_ROTATION_DAYS', async () => {
    const keys = sut.app.get(KeyStoreService);
    const active = (await keys.list()).find((k) => k.retiredAt === null)!;
    await keys.maintain(new Date(Date.now() + 89 * 86_400_000));
    expect((await keys.list()).find((k) => k.retiredAt === null)!.kid).toBe(active.kid);
    await keys.maintain(new Date(Date.now() + 91 * 86_400_000));
    expect((await keys.list()).find((k) => k.retiredAt === null)!.kid).not.toBe(active.kid);
  });

  it('keys list prints one JSON line per key', async () => {
    const run = await cli('keys', 'list');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.signing)).toHaveLength(1);
  });

  it('changing CAS_KEY_ENCRYPTION_KEY: the old value as _PREVIOUS opens the keys until `keys reencrypt` seals them under the new one', async () => {
    const oldKek = sut.config.CAS_KEY_ENCRYPTION_KEY;
    const newKek = 'new-key-encryption-key-9876543210';
    const stored = async () => (await sut.app.get(DataSource).query('SELECT kid, private_key_enc FROM cas_signing_keys ORDER BY kid')) as Array<{ kid: string; private_key_enc: string }>;
    const kids = (await stored()).map((r) => r.kid);
    expect(kids.length).toBeGreaterThan(1);
    for (const row of await stored()) expect(() => new KeyEncryption(newKek).decrypt(row.private_key_enc)).toThrow(/CAS_KEY_ENCRYPTION_KEY differs/);

    // Without the old value nothing can be re-encrypted, and nothing is changed.
    const blind = await withKeys({ CAS_KEY_ENCRYPTION_KEY: newKek }, 'keys', 'reencrypt');
    expect(blind.status).not.toBe(0);
    expect(blind.stderr).toContain('CAS_KEY_ENCRYPTION_KEY differs');
    for (const row of await stored()) expect(new KeyEncryption(oldKek).isCurrent(row.private_key_enc)).toBe(true);

    const run = await withKeys({ CAS_KEY_ENCRYPTION_KEY: newKek, CAS_KEY_ENCRYPTION_KEY_PREVIOUS: oldKek }, 'keys', 'reencrypt');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual({ reencrypted: expect.arrayContaining(kids), already_current: [] });
    expect(run.stdout).not.toContain(newKek);
    expect(run.stderr).not.toContain(newKek);
    expect(run.stderr).not.toContain(oldKek);
    const again = await withKeys({ CAS_KEY_ENCRYPTION_KEY: newKek, CAS_KEY_ENCRYPTION_KEY_PREVIOUS: oldKek }, 'keys', 'reencrypt');
    expect(JSON.parse(again.stdout.trim())).toEqual({ reencrypted: [], already_current: expect.arrayContaining(kids) });
    for (const row of await stored()) {
      expect(new KeyEncryption(newKek).isCurrent(row.private_key_enc)).toBe(true);
      expect(() => new KeyEncryption(oldKek).decrypt(row.private_key_enc)).toThrow();
    }

    // A CAS started with the new value alone signs with the same keys.
    const restarted = await startTestCasApp({ CAS_DATABASE_URL: sut.config.CAS_DATABASE_URL, CAS_KEY_ENCRYPTION_KEY: newKek });
    try {
      const jwt = (await request(restarted.url).post('/connect/token').auth('demo-machine', 'demo-machine-secret').type('form').send({ grant_type: 'client_credentials', scope: 'read' }).expect(200)).body.access_token as string;
      expect(kids).toContain(decodeProtectedHeader(jwt).kid);
      const set = (await request(restarted.url).get('/.well-known/openid-configuration/jwks').expect(200)).body as JSONWebKeySet;
      await expect(jwtVerify(jwt, createLocalJWKSet(set), { issuer: restarted.url, audience: 'collect-api', algorithms: ['RS256'] })).resolves.toBeDefined();
    } finally {
      await restarted.close();
    }
  });
});
