import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { kekFromConfig, sealWithKek } from '../src/encryption/key-sealing.js';
import { base64Spki, keyId, loadPrivateKey } from '../src/encryption/rsa-keys.js';
import { demoXForm, jpeg } from './forms-fixtures.js';
import { encryptSubmission, type Envelope } from './odk-encryptor.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * OpenRosa intake of encrypted envelopes (docs/encryption.md "Intake", "How an envelope is
 * stored", "Server mode"): real envelopes made by ODK Collect (from ODK Briefcase's and ODK
 * Central's public test data, read from ../shared beside the repository) and envelopes of the
 * tests' own encryptor with a photo, in every mode.
 */
const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/', import.meta.url));
const fixture = (dir: string, file: string) => readFileSync(`${FIXTURES}${dir}/${file}`, 'utf8');
const fixtureCipher = (dir: string) => Buffer.from(fixture(dir, 'submission.xml.enc.b64').replace(/\s+/g, ''), 'base64');

const versionOf = (xml: string) => /<data id="[^"]*" version="([^"]*)"/.exec(xml)?.[1] ?? null;
const keyAttr = (xml: string) => /base64RsaPublicKey="([^"]*)"/.exec(xml)![1]!;

/** The demo form's instance with answers and a photo. */
function instanceXml(idString: string, version: string | null, instanceId: string, photo: string | null): string {
  const v = version ? ` version="${version}"` : '';
  return `<?xml version="1.0"?><data id="${idString}"${v}><name>Amina</name><age>34</age><household><size>5</size>${photo ? `<photo>${photo}</photo>` : ''}</household><meta><instanceID>uuid:${instanceId}</instanceID></meta></data>`;
}

describe('encrypted submissions: intake, storage and decryption on receipt', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  const kek = randomBytes(32).toString('base64');
  const as = (u: TestUser) => ({ Authorization: u.token });

  beforeAll(async () => {
    sut = await startTestCollectApp({ ENCRYPTION_KEK: kek });
    owner = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  const db = () => sut.app.get(DataSource);
  async function upload(xml: string): Promise<number> {
    return (await request(sut.url).post('/api/v1/forms').set(as(owner)).attach('xml_file', Buffer.from(xml), 'form.xml').expect(201)).body.formid as number;
  }
  const formXml = async (pk: number) => (await request(sut.url).get(`/api/v1/forms/${pk}/form.xml`).set(as(owner)).expect(200)).text;
  /** Sends the manifest with the named parts (all of them when `only` is not given). */
  function send(manifest: string, parts: Map<string, Buffer>, only?: string[], who = owner) {
    let req = request(sut.url).post('/submission').set(as(who)).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(manifest), { filename: 'submission.xml', contentType: 'text/xml' });
    for (const [name, bytes] of parts) if (!only || only.includes(name)) req = req.attach(name, bytes, { filename: name, contentType: 'application/octet-stream' });
    return req;
  }
  const rows = async (pk: number) => (await request(sut.url).get(`/api/v1/data/${pk}`).set(as(owner)).expect(200)).body as Array<Record<string, unknown>>;
  /** Per submission of the form: whether its envelope row, its decryption time and its parts' rows have the submission's transaction time (null: none). */
  const together = async (pk: number) => db().query(
    `SELECT e.created_at = s.date_created AS envelope, e.decrypted_at = s.date_created AS decrypted,
       bool_and(a.date_created = s.date_created AND (a.deleted_at IS NULL OR a.deleted_at = s.date_created)) AS parts
     FROM submissions s JOIN submission_envelopes e ON e.submission_id = s.id JOIN attachments a ON a.submission_id = s.id
     WHERE s.form_id = $1 GROUP BY s.id, e.created_at, e.decrypted_at ORDER BY s.id`, [pk]);
  const media = async (pk: number) => (await request(sut.url).get(`/api/v1/media?xform=${pk}`).set(as(owner)).expect(200)).body as Array<Record<string, unknown>>;
  const download = async (url: string) => (await request(sut.url).get(new URL(url).pathname + new URL(url).search).set(as(owner)).buffer(true).parse((res, cb) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => cb(null, Buffer.concat(chunks)));
  }).expect(200)).body as Buffer;
  /** Gives the form's current key to the server, as an operator importing a phone-era key would: sealed under ENCRYPTION_KEK. */
  async function serverHolds(pk: number, pem: string): Promise<void> {
    const key = loadPrivateKey(pem);
    if (!key.ok) throw new Error(key.failure.message);
    await db().query(`INSERT INTO form_encryption_keys (form_id, key_id, mode, public_key, sealed) VALUES ($1, $2, 'server', $3, $4)`,
      [pk, keyId(key.value), base64Spki(key.value), JSON.stringify(sealWithKek(key.value, kekFromConfig(kek)!))]);
  }
  /** A form given a key through the API (server, passphrase) or a self key; its served version and key. */
  async function encryptedForm(idString: string, body: Record<string, unknown>): Promise<{ pk: number; version: string; publicKey: string }> {
    const pk = await upload(demoXForm(idString));
    await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(owner)).send(body).expect(201);
    const xml = await formXml(pk);
    return { pk, version: versionOf(xml)!, publicKey: keyAttr(xml) };
  }
  async function withPhoto(f: { version: string; publicKey: string }, idString: string): Promise<{ env: Envelope; photo: Buffer; xml: string; instanceId: string }> {
    const instanceId = randomUUID();
    // A 100 KB photo: a real JPEG with random bytes after it (what the phone's camera would give, in size).
    const photo = Buffer.concat([await jpeg(), randomBytes(100_000)]);
    const xml = instanceXml(idString, f.version, instanceId, 'photo.jpg');
    const env = encryptSubmission({ publicKey: f.publicKey, formId: idString, version: f.version, instanceId: `uuid:${instanceId}`, submissionXml: xml, media: [{ name: 'photo.jpg', bytes: photo }] });
    return { env, photo, xml, instanceId };
  }

  it('a Collect-made envelope (ODK Briefcase\'s vector): 201, stored whole, metadata only in the data API, counted; a resend is a duplicate', async () => {
    const dir = 'briefcase-encryption';
    const pk = await upload(fixture(dir, 'form.xml'));
    const manifest = fixture(dir, 'manifest.xml');
    const cipher = fixtureCipher(dir);
    await send(manifest, new Map([['submission.xml.enc', cipher]])).expect(201);
    const [row] = await rows(pk);
    expect(row).toMatchObject({ _uuid: '494cd080-3bf4-47be-b40f-c706a950d58a', _xform_id_string: 'encrypted-form', _encrypted: true, _decryption: 'pending', _submitted_by: owner.username });
    expect(row).not.toHaveProperty('name');
    expect(row).not.toHaveProperty('_decryption_error');
    const attachments = row!._attachments as Array<{ name: string; mimetype: string; download_url: string }>;
    expect(attachments.map((a) => [a.name, a.mimetype])).toEqual([['submission.xml.enc', 'application/octet-stream']]);
    expect((await download(attachments[0]!.download_url)).equals(cipher)).toBe(true);
    const resource = (await request(sut.url).get(`/api/v1/forms/${pk}`).set(as(owner)).expect(200)).body;
    expect(resource).toMatchObject({ num_of_submissions: 1, encrypted: true, encryption: { mode: 'self', hint: null, public_key: keyAttr(fixture(dir, 'form.xml')), created_at: null } });
    expect((await media(pk)).map((m) => String(m.filename).split("/").pop())).toEqual(['submission.xml.enc']);
    expect((await request(sut.url).get(`/api/v1/media/count?xform=${pk}`).set(as(owner)).expect(200)).body).toEqual({ count: 1 });
    await send(manifest, new Map([['submission.xml.enc', cipher]])).expect(202);
    expect(await rows(pk)).toHaveLength(1);
    const [stored] = await db().query(`SELECT manifest, parts, decryption, key_id FROM submission_envelopes WHERE form_id = $1`, [pk]);
    expect(stored).toMatchObject({ manifest, parts: ['submission.xml.enc'], decryption: 'pending', key_id: expect.any(String) });
  });

  it('the same Collect-made envelope in server mode decrypts on receipt to the original answers', async () => {
    const dir = 'briefcase-encryption';
    // Another owner: the id_string is taken by the first test's form for `owner`.
    const other = await createTestUser(sut.app);
    const pk = (await request(sut.url).post('/api/v1/forms').set(as(other)).attach('xml_file', Buffer.from(fixture(dir, 'form.xml')), 'form.xml').expect(201)).body.formid as number;
    await serverHolds(pk, fixture(dir, 'priv.pem'));
    await request(sut.url).post(`/${other.username}/submission`).set(as(other)).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(fixture(dir, 'manifest.xml')), { filename: 'submission.xml', contentType: 'text/xml' })
      .attach('submission.xml.enc', fixtureCipher(dir), { filename: 'submission.xml.enc', contentType: 'application/octet-stream' })
      .expect(201);
    const [row] = (await request(sut.url).get(`/api/v1/data/${pk}`).set(as(other)).expect(200)).body as Array<Record<string, unknown>>;
    expect(row).toMatchObject({ name: 'Guillermo', _encrypted: true, _decryption: 'decrypted', _uuid: '494cd080-3bf4-47be-b40f-c706a950d58a', _attachments: [] });
    const [{ xml }] = await db().query(`SELECT xml FROM submissions WHERE form_id = $1`, [pk]);
    expect(xml).toBe(fixture(dir, 'expected-submission.xml').replace(/\n$/, ''));
  });

  it('Central\'s Collect-made envelope, split over sends, in server mode: pending while its photo is missing; a photo that is not the one signed fails with the reason', async () => {
    const dir = 'central-encryption';
    const pk = await upload(fixture(dir, 'form.xml'));
    await serverHolds(pk, fixture(dir, 'priv.pem'));
    const manifest = fixture(dir, 'manifest.xml');
    await send(manifest, new Map()).expect(201);
    expect((await rows(pk))[0]).toMatchObject({ _encrypted: true, _decryption: 'pending', _attachments: [], _version: 'working3' });
    await send(manifest, new Map([['submission.xml.enc', fixtureCipher(dir)]])).expect(202);
    const [pending] = await rows(pk);
    expect(pending).toMatchObject({ _decryption: 'pending' });
    expect((pending!._attachments as Array<{ name: string }>).map((a) => a.name)).toEqual(['submission.xml.enc']);
    await send(manifest, new Map([['1561432532482.jpg.enc', randomBytes(4096)]])).expect(202);
    const [failed] = await rows(pk);
    expect(failed).toMatchObject({ _encrypted: true, _decryption: 'failed' });
    expect(['part_undecryptable', 'signature_mismatch']).toContain(failed!._decryption_error);
    expect(failed).not.toHaveProperty('age');
    // Nothing dropped: both parts stay listed.
    expect((await media(pk)).map((m) => String(m.filename).split("/").pop()).sort()).toEqual(['1561432532482.jpg.enc', 'submission.xml.enc']);
    const [envelope] = await db().query(`SELECT decryption, decryption_error FROM submission_envelopes WHERE form_id = $1`, [pk]);
    expect(envelope.decryption_error).toMatchObject({ reason: failed!._decryption_error, message: expect.any(String) });
  });

  it('server mode, own encryptor, a 100 KB photo sent after the XML: pending, then decrypted, with the photo byte for byte', async () => {
    const f = await encryptedForm('enc_in_server', { mode: 'server' });
    const { env, photo, instanceId } = await withPhoto(f, 'enc_in_server');
    await send(env.manifest, env.parts, ['submission.xml.enc']).expect(201);
    expect((await rows(f.pk))[0]).toMatchObject({ _uuid: instanceId, _decryption: 'pending' });
    expect((await rows(f.pk))[0]).not.toHaveProperty('name');
    await send(env.manifest, env.parts, ['photo.jpg.enc']).expect(202);
    const [row] = await rows(f.pk);
    expect(row).toMatchObject({ name: 'Amina', age: '34', 'household/size': '5', 'household/photo': 'photo.jpg', _encrypted: true, _decryption: 'decrypted', _version: f.version });
    const attachments = row!._attachments as Array<{ name: string; mimetype: string; download_url: string }>;
    expect(attachments.map((a) => [a.name, a.mimetype])).toEqual([['photo.jpg', 'image/jpeg']]);
    expect((await download(attachments[0]!.download_url)).equals(photo)).toBe(true);
    expect((await media(f.pk)).map((m) => String(m.filename).split("/").pop())).toEqual(['photo.jpg']);
    expect((await request(sut.url).get(`/api/v1/forms/${f.pk}`).set(as(owner)).expect(200)).body.num_of_submissions).toBe(1);
    // A resend after decryption is still the same submission.
    await send(env.manifest, env.parts).expect(202);
  });

  it('server mode, every part in one send: stored decrypted at once, its .enc parts kept hidden with their sizes; a resend is a duplicate that adds nothing', async () => {
    const f = await encryptedForm('enc_in_whole', { mode: 'server' });
    const { env, photo, instanceId } = await withPhoto(f, 'enc_in_whole');
    await send(env.manifest, env.parts).expect(201);
    const [row] = await rows(f.pk);
    expect(row).toMatchObject({ _uuid: instanceId, name: 'Amina', 'household/photo': 'photo.jpg', _encrypted: true, _decryption: 'decrypted' });
    const attachments = row!._attachments as Array<{ name: string; mimetype: string; download_url: string }>;
    expect(attachments.map((a) => [a.name, a.mimetype])).toEqual([['photo.jpg', 'image/jpeg']]);
    expect((await download(attachments[0]!.download_url)).equals(photo)).toBe(true);
    const kept = async () => db().query(
      `SELECT a.name, a.size::int AS size, a.deleted_at IS NOT NULL AS hidden FROM attachments a JOIN submissions s ON s.id = a.submission_id WHERE s.form_id = $1 ORDER BY a.name`, [f.pk]);
    const expected = [
      { name: 'photo.jpg', size: photo.length, hidden: false },
      { name: 'photo.jpg.enc', size: env.parts.get('photo.jpg.enc')!.length, hidden: true },
      { name: 'submission.xml.enc', size: env.parts.get('submission.xml.enc')!.length, hidden: true },
    ];
    expect(await kept()).toEqual(expected);
    const [envelope] = await db().query(`SELECT decryption, parts FROM submission_envelopes WHERE form_id = $1`, [f.pk]);
    expect(envelope).toEqual({ decryption: 'decrypted', parts: ['photo.jpg.enc', 'submission.xml.enc'] });
    // The envelope row and the parts' rows commit with the submission (one transaction: one now()).
    expect(await together(f.pk)).toEqual([{ envelope: true, decrypted: true, parts: true }]);
    await send(env.manifest, env.parts).expect(202);
    expect(await rows(f.pk)).toHaveLength(1);
    expect(await kept()).toEqual(expected);
  });

  it('passphrase and self modes: stored whole and pending (the platform cannot read them)', async () => {
    const pass = await encryptedForm('enc_in_pass', { mode: 'passphrase', passphrase: 'correct horse battery staple' });
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const self = await encryptedForm('enc_in_self', { mode: 'self', public_key: base64Spki(pair.publicKey) });
    for (const [f, idString] of [[pass, 'enc_in_pass'], [self, 'enc_in_self']] as const) {
      const { env, instanceId } = await withPhoto(f, idString);
      await send(env.manifest, env.parts).expect(201);
      const [row] = await rows(f.pk);
      expect(row).toMatchObject({ _uuid: instanceId, _encrypted: true, _decryption: 'pending' });
      expect(row).not.toHaveProperty('name');
      expect((row!._attachments as Array<{ name: string; mimetype: string }>).map((a) => [a.name, a.mimetype])).toEqual([['photo.jpg.enc', 'application/octet-stream'], ['submission.xml.enc', 'application/octet-stream']]);
      const [{ parts }] = await db().query(`SELECT parts FROM submission_envelopes WHERE form_id = $1`, [f.pk]);
      expect(parts).toEqual(['photo.jpg.enc', 'submission.xml.enc']);
      expect(await together(f.pk)).toEqual([{ envelope: true, decrypted: null, parts: true }]);
    }
  });

  it('server mode: a tampered part or a wrong key fails with the reason; nothing is dropped', async () => {
    const f = await encryptedForm('enc_in_tamper', { mode: 'server' });
    const tampered = await withPhoto(f, 'enc_in_tamper');
    const xmlPart = Buffer.from(tampered.env.parts.get('submission.xml.enc')!);
    xmlPart[20] ^= 1;
    await send(tampered.env.manifest, new Map([...tampered.env.parts, ['submission.xml.enc', xmlPart]])).expect(201);
    // Encrypted for another key than the form's: the symmetric key does not unwrap.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const wrongKey = await withPhoto({ version: f.version, publicKey: base64Spki(other.publicKey) }, 'enc_in_tamper');
    await send(wrongKey.env.manifest, wrongKey.env.parts).expect(201);
    const byUuid = new Map((await rows(f.pk)).map((r) => [r._uuid, r]));
    expect(byUuid.get(tampered.instanceId)).toMatchObject({ _decryption: 'failed', _decryption_error: expect.stringMatching(/^(part_undecryptable|signature_mismatch)$/) });
    expect(byUuid.get(wrongKey.instanceId)).toMatchObject({ _decryption: 'failed', _decryption_error: 'key_unwrap_failed' });
    expect(await media(f.pk)).toHaveLength(4);
  });

  it('clear 400s: plaintext to an encrypted form, an envelope to a plaintext form, another form\'s id or version, a part the manifest does not name', async () => {
    const f = await encryptedForm('enc_in_refuse', { mode: 'server' });
    const plainPk = await upload(demoXForm('enc_in_plain'));
    const plainVersion = versionOf(await formXml(plainPk))!;
    // The form resources say which is which.
    expect((await request(sut.url).get(`/api/v1/forms/${plainPk}`).set(as(owner)).expect(200)).body).toMatchObject({ encrypted: false, encryption: null });
    const listed = (await request(sut.url).get('/api/v1/forms').set(as(owner)).expect(200)).body as Array<{ formid: number; encrypted: boolean; encryption: { mode: string; public_key: string } | null }>;
    expect(listed.find((x) => x.formid === f.pk)).toMatchObject({ encrypted: true, encryption: { mode: 'server', public_key: f.publicKey, created_at: expect.any(String) } });
    const detail = (res: request.Response) => `${Object.values(res.body as Record<string, unknown>).flat().join(' ')} ${res.text}`;

    const plaintext = await request(sut.url).post('/submission').set(as(owner)).attach('xml_submission_file', Buffer.from(instanceXml('enc_in_refuse', f.version, randomUUID(), null)), 'submission.xml').expect(400);
    expect(detail(plaintext)).toMatch(/is encrypted.*this one is plaintext/);
    const json = await request(sut.url).post('/api/v1/submissions').set(as(owner)).send({ id: 'enc_in_refuse', submission: { name: 'x' } }).expect(400);
    expect(detail(json)).toMatch(/is encrypted/);

    const toPlain = encryptSubmission({ publicKey: f.publicKey, formId: 'enc_in_plain', version: plainVersion, instanceId: `uuid:${randomUUID()}`, submissionXml: '<data/>' });
    expect(detail(await send(toPlain.manifest, toPlain.parts).expect(400))).toMatch(/is not encrypted.*encrypted envelope/);

    const otherVersion = encryptSubmission({ publicKey: f.publicKey, formId: 'enc_in_refuse', version: 'no-such-version', instanceId: `uuid:${randomUUID()}`, submissionXml: '<data/>' });
    expect(detail(await send(otherVersion.manifest, otherVersion.parts).expect(400))).toMatch(/version "no-such-version".*does not have/);
    // The version the form had before its key: plaintext, so an envelope for it is refused.
    const oldVersion = encryptSubmission({ publicKey: f.publicKey, formId: 'enc_in_refuse', version: '2026110101', instanceId: `uuid:${randomUUID()}`, submissionXml: '<data/>' });
    expect(detail(await send(oldVersion.manifest, oldVersion.parts).expect(400))).toMatch(/version "2026110101" is not encrypted/);

    const good = await withPhoto(f, 'enc_in_refuse');
    const stray = new Map([...good.env.parts, ['other.jpg.enc', randomBytes(32)]]);
    expect(detail(await send(good.env.manifest, stray).expect(400))).toMatch(/names no part "other.jpg.enc"/);
    // Another form's id inside the manifest, sent to this form's owner path: the manifest decides nothing by itself.
    const renamed = good.env.manifest.replace('id="enc_in_refuse"', 'id="enc_in_plain"');
    expect(detail(await send(renamed, good.env.parts).expect(400))).toMatch(/form "enc_in_plain"/);
    expect(await rows(f.pk)).toHaveLength(0);
    expect(await rows(plainPk)).toHaveLength(0);
  });

  it('fuzzed envelopes: every answer is a 201, 202 or a 4xx, never a 500', async () => {
    const f = await encryptedForm('enc_in_fuzz', { mode: 'server' });
    const { env } = await withPhoto(f, 'enc_in_fuzz');
    const statuses = new Map<number, number>();
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    const mutations: Array<(m: string) => string> = [
      (m) => m.slice(0, rand(m.length)),
      (m) => { const i = rand(m.length); return m.slice(0, i) + String.fromCharCode(rand(128)) + m.slice(i + 1); },
      (m) => m.replace(/<base64EncryptedKey>[^<]*/, `<base64EncryptedKey>${randomBytes(rand(600)).toString('base64')}`),
      (m) => m.replace(/<base64EncryptedElementSignature>[^<]*/, '<base64EncryptedElementSignature>!!!'),
      (m) => m.replace(/<file>[^<]*<\/file>/, `<file>${['../x.enc', '', 'a/b.enc', 'submission.xml.enc', 'x'.repeat(300)][rand(5)]}</file>`),
      (m) => m.replace(/<encryptedXmlFile>[^<]*/, '<encryptedXmlFile>photo.jpg.enc'),
      (m) => m.replace(/<instanceID>[^<]*/, `<instanceID>${['', 'uuid:', 'x'.repeat(2000)][rand(3)]}`),
      (m) => m.replace('encrypted="yes"', ['encrypted="no"', '', 'encrypted="YES"'][rand(3)]!),
      (m) => m.replace(/xmlns="[^"]*"/, ['xmlns="urn:other"', '', 'xmlns="http://opendatakit.org/submissions"'][rand(3)]!),
      (m) => m.replace(/<media>/, '<media><file>photo.jpg.enc</file>'),
    ];
    for (let i = 0; i < 60; i++) {
      const manifest = mutations[i % mutations.length]!(env.manifest);
      const parts = new Map([...env.parts].map(([n, b]) => [n, rand(3) ? b : b.subarray(0, rand(b.length))] as const));
      const res = await send(manifest, parts);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect([res.status, res.status < 500]).toEqual([res.status, true]);
    }
    expect([...statuses.keys()].some((s) => s === 400)).toBe(true);
    // Whatever was stored is whole and has a status.
    const stored = await db().query(`SELECT decryption FROM submission_envelopes WHERE form_id = $1`, [f.pk]);
    for (const s of stored) expect(['pending', 'decrypted', 'failed']).toContain(s.decryption);
  });
});
