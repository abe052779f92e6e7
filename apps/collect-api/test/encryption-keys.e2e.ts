import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { JSDOM } from 'jsdom';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { tablesToXlsx } from '@collect/xlsform';
import { decryptEnvelope } from '../src/encryption/envelope-decryptor.js';
import { kekFromConfig, openWithKek, openWithPassphrase, type SealedPrivateKey } from '../src/encryption/key-sealing.js';
import { parseManifest } from '../src/encryption/manifest.js';
import { base64Spki, keyId } from '../src/encryption/rsa-keys.js';
import { demoXForm } from './forms-fixtures.js';
import { encryptSubmission } from './odk-encryptor.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * `POST/GET /api/v1/forms/{pk}/encryption` (docs/encryption.md "Modes"): each mode gives the
 * form a new version whose XForm carries the public key; passphrase and server modes keep the
 * private key only sealed; ODK Web Forms' engine loads the encrypted form and reports its key;
 * what a phone would encrypt for it decrypts with the key the platform kept.
 */
function installDom(): void {
  const { window } = new JSDOM('');
  const g = globalThis as Record<string, unknown>;
  g.__dirname = '/';
  for (const k of ['DOMParser', 'XMLSerializer', 'document', 'Node', 'Element', 'Document', 'NodeFilter', 'XPathResult']) g[k] = (window as unknown as Record<string, unknown>)[k];
}

const keyAttr = (xml: string) => /base64RsaPublicKey="([^"]*)"/.exec(xml)?.[1] ?? null;
const versionOf = (xml: string) => /<data id="[^"]*" version="([^"]*)"/.exec(xml)?.[1];

describe('encrypted forms: keys per form version', () => {
  let sut: TestCollectApp;
  let plain: TestCollectApp;
  let owner: TestUser;
  let manager: TestUser;
  let reader: TestUser;
  let engine: typeof import('@getodk/xforms-engine');
  const kek = randomBytes(32).toString('base64');
  const as = (u: TestUser) => ({ Authorization: u.token });

  async function newForm(app: TestCollectApp, idString: string): Promise<number> {
    const res = await request(app.url).post('/api/v1/forms').set(as(owner)).set('Content-Type', 'application/xml').send(demoXForm(idString)).expect(201);
    return res.body.formid as number;
  }
  const formXml = async (app: TestCollectApp, pk: number) => (await request(app.url).get(`/api/v1/forms/${pk}/form.xml`).set(as(owner)).expect(200)).text;
  const sealedOf = async (pk: number): Promise<Array<{ mode: string; sealed: SealedPrivateKey | null; key_id: string }>> =>
    sut.app.get(DataSource).query(`SELECT mode, sealed, key_id FROM form_encryption_keys WHERE form_id = $1 ORDER BY id`, [pk]);

  beforeAll(async () => {
    installDom();
    engine = await import('@getodk/xforms-engine');
    sut = await startTestCollectApp({ ENCRYPTION_KEK: kek });
    owner = await createTestUser(sut.app);
    manager = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
  });
  afterAll(async () => {
    await sut.close();
    await plain?.close();
  });

  it('self mode: the XForm carries the given key in a new version; the engine loads the form and encrypts to that key', async () => {
    const pk = await newForm(sut, 'enc_self');
    await request(sut.url).get(`/api/v1/forms/${pk}/encryption`).set(as(owner)).expect(404);
    const before = await formXml(sut, pk);
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const spki = base64Spki(pair.publicKey);
    const res = await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(owner)).send({ mode: 'self', public_key: spki, hint: 'the key is in the office safe' }).expect(201);
    expect(res.body).toEqual({ mode: 'self', hint: 'the key is in the office safe', public_key: spki, version: expect.any(String), created_at: expect.any(String) });
    const after = await formXml(sut, pk);
    expect(keyAttr(after)).toBe(spki);
    expect(versionOf(after)).toBe(res.body.version);
    expect(versionOf(after)).not.toBe(versionOf(before));
    expect((await request(sut.url).get(`/api/v1/forms/${pk}`).set(as(owner)).expect(200)).body.version).toBe(res.body.version);
    expect((await request(sut.url).get(`/api/v1/forms/${pk}/encryption`).set(as(owner)).expect(200)).body).toEqual(res.body);
    expect(await sealedOf(pk)).toEqual([{ mode: 'self', sealed: null, key_id: keyId(pair.publicKey) }]);

    // ODK Web Forms' engine: the served form loads, and its submission metadata names the key.
    const loaded = await engine.loadForm(after, { fetchFormAttachment: async () => new Response('', { status: 404 }) });
    expect([loaded.status, loaded.error?.message]).toEqual(['success', undefined]);
    const root = loaded.createInstance().root as unknown as { prepareInstancePayload(): Promise<{ status: string; submissionMeta: { encryptionKey: string | null }; data: FormData[] }> };
    const payload = await root.prepareInstancePayload();
    expect(payload.submissionMeta.encryptionKey).toBe(spki);
    // What a phone makes of the engine's instance with that key decrypts with the private half.
    const instanceXml = await (payload.data[0]!.get('xml_submission_file') as File).text();
    const instanceId = /<instanceID>([^<]+)<\/instanceID>/.exec(instanceXml)![1]!;
    const env = encryptSubmission({ publicKey: payload.submissionMeta.encryptionKey!, formId: 'enc_self', version: versionOf(after), instanceId, submissionXml: instanceXml });
    const m = parseManifest(env.manifest);
    const out = m.ok ? decryptEnvelope(m.value, pair.privateKey, env.parts) : m;
    expect(out.ok && out.value.submissionXml!.toString()).toBe(instanceXml);
  });

  it('passphrase mode: the platform makes the pair; only the sealed private key is stored, and the passphrase opens it', async () => {
    const pk = await newForm(sut, 'enc_pass');
    await request(sut.url).put(`/api/v1/forms/${pk}/share`).set(as(owner)).send({ username: manager.username, role: 'manager' }).expect(204);
    const passphrase = 'a long passphrase nobody stores';
    const res = await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(manager)).send({ mode: 'passphrase', passphrase }).expect(201);
    expect(res.body).toMatchObject({ mode: 'passphrase', hint: null });
    const rows = await sealedOf(pk);
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(passphrase);
    expect(rows[0]!.sealed).toMatchObject({ sealed_by: 'passphrase', kdf: { name: 'argon2id', memory_kib: 65_536, passes: 3, parallelism: 1 } });
    const opened = await openWithPassphrase(rows[0]!.sealed!, passphrase);
    expect(opened.ok && keyId(opened.value)).toBe(rows[0]!.key_id);
    expect(keyAttr(await formXml(sut, pk))).toBe(res.body.public_key);
    const wrong = await openWithPassphrase(rows[0]!.sealed!, 'not the passphrase at all');
    expect(!wrong.ok && wrong.failure.reason).toBe('passphrase_wrong');
  });

  it('server mode: sealed under ENCRYPTION_KEK; a second key is another version, and the first stays for older submissions', async () => {
    const pk = await newForm(sut, 'enc_server');
    const first = await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(owner)).send({ mode: 'server' }).expect(201);
    const second = await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(owner)).send({ mode: 'server', hint: 'rotated' }).expect(201);
    expect(second.body.public_key).not.toBe(first.body.public_key);
    expect(second.body.version).not.toBe(first.body.version);
    const rows = await sealedOf(pk);
    expect(rows.map((r) => r.mode)).toEqual(['server', 'server']);
    for (const r of rows) {
      const opened = openWithKek(r.sealed!, kekFromConfig(kek)!);
      expect(opened.ok && keyId(opened.value)).toBe(r.key_id);
    }
    expect((await request(sut.url).get(`/api/v1/forms/${pk}/encryption`).set(as(owner)).expect(200)).body).toMatchObject({ mode: 'server', hint: 'rotated', public_key: second.body.public_key });
    // Both versions are kept; the older one still names the first key.
    const versions: Array<{ version: string; xml: string }> = await sut.app.get(DataSource).query(`SELECT version, xml FROM form_versions WHERE form_id = $1 ORDER BY id`, [pk]);
    expect(versions.map((v) => keyAttr(v.xml))).toEqual([null, first.body.public_key, second.body.public_key]);
  });

  it('an XLSForm with the setting public_key: a self-mode key without a row', async () => {
    const spki = base64Spki(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey);
    const xlsx = await tablesToXlsx({ survey: [['type', 'name', 'label'], ['text', 'q', 'Q']], settings: [['form_id', 'public_key'], ['enc_xls', spki]] });
    const created = await request(sut.url).post('/api/v1/forms').set(as(owner)).attach('xls_file', Buffer.from(xlsx), 'enc.xlsx').expect(201);
    expect((await request(sut.url).get(`/api/v1/forms/${created.body.formid}/encryption`).set(as(owner)).expect(200)).body).toMatchObject({ mode: 'self', public_key: spki, hint: null });
    const loaded = await engine.loadForm(await formXml(sut, created.body.formid), { fetchFormAttachment: async () => new Response('', { status: 404 }) });
    const payload = await (loaded.createInstance().root as unknown as { prepareInstancePayload(): Promise<{ submissionMeta: { encryptionKey: string | null } }> }).prepareInstancePayload();
    expect(payload.submissionMeta.encryptionKey).toBe(spki);
  });

  it('clear 4xx: bad modes and keys, short passphrases, unknown fields, roles below manager, strangers', async () => {
    const pk = await newForm(sut, 'enc_bad');
    await request(sut.url).put(`/api/v1/forms/${pk}/share`).set(as(owner)).send({ username: reader.username, role: 'editor' }).expect(204);
    const post = (body: unknown, who = owner) => request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(who)).send(body as object);
    const small = base64Spki(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey);
    for (const [body, field] of [
      [{ mode: 'symmetric' }, 'mode'],
      [{}, 'mode'],
      [{ mode: 'self' }, 'public_key'],
      [{ mode: 'self', public_key: 'not a key' }, 'public_key'],
      [{ mode: 'self', public_key: small }, 'public_key'],
      [{ mode: 'passphrase' }, 'passphrase'],
      [{ mode: 'passphrase', passphrase: 'short' }, 'passphrase'],
      [{ mode: 'passphrase', passphrase: 'x'.repeat(1025) }, 'passphrase'],
      [{ mode: 'server', private_key: 'x' }, 'private_key'],
    ] as const) {
      const res = await post(body).expect(400);
      expect(Object.keys(res.body)).toContain(field);
    }
    // A validation message never repeats the passphrase.
    expect(JSON.stringify((await post({ mode: 'passphrase', passphrase: 'Sh0rt-pp9' }).expect(400)).body)).not.toContain('Sh0rt-pp9');
    await post({ mode: 'server' }, reader).expect(403);
    // Nothing above changed the form: still no key. Readers see a key once there is one.
    await request(sut.url).get(`/api/v1/forms/${pk}/encryption`).set(as(reader)).expect(404);
    await post({ mode: 'server' }).expect(201);
    await request(sut.url).get(`/api/v1/forms/${pk}/encryption`).set(as(reader)).expect(200);
    const stranger = await createTestUser(sut.app);
    await post({ mode: 'server' }, stranger).expect(404);
    await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).send({ mode: 'server' }).expect(401);
  });

  it('server mode without ENCRYPTION_KEK: 400 naming it, and the form is unchanged', async () => {
    plain = await startTestCollectApp();
    const other = await createTestUser(plain.app);
    const pk = (await request(plain.url).post('/api/v1/forms').set(as(other)).set('Content-Type', 'application/xml').send(demoXForm('enc_nokek')).expect(201)).body.formid;
    const res = await request(plain.url).post(`/api/v1/forms/${pk}/encryption`).set(as(other)).send({ mode: 'server' }).expect(400);
    expect(JSON.stringify(res.body)).toContain('ENCRYPTION_KEK');
    await request(plain.url).get(`/api/v1/forms/${pk}/encryption`).set(as(other)).expect(404);
  });
});
