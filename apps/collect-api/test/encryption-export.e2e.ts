import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { briefcasePull } from './briefcase-client.js';
import { binary, unzip } from './data-fixtures.js';
import { demoXForm, jpeg } from './forms-fixtures.js';
import { encryptSubmission, ivSeed } from './odk-encryptor.js';
import { openEnvelope } from './odk-pull-decryptor.js';
import { EnvelopeStore } from '../src/encrypted-submissions/envelope-store.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Encrypted data out (docs/encryption.md "Decrypting without a server-held key", "Briefcase
 * pull"): envelopes of the tests' own encryptor with a photo each and a real ODK Collect envelope
 * (ODK Central's public test data, read from ../shared beside the repository) decrypted by
 * `POST /api/v1/forms/{pk}/decrypt` in every format, compared with the plaintext export of the
 * same answers; and the same envelopes pulled as ODK Briefcase pulls them and opened by a
 * decryptor that shares no code with the product's.
 */
const CENTRAL = fileURLToPath(new URL('../../../../shared/fixtures/central-encryption/', import.meta.url));
const central = (file: string) => readFileSync(`${CENTRAL}${file}`, 'utf8');

/** CSV rows as arrays of cells (the exports quote as RFC 4180; these answers hold no quotes or newlines). */
const csvRows = (text: string) => text.trim().split('\n').map((l) => l.split(','));
const METADATA = new Set(['_id', '_uuid', '_submission_time', '_version', '_submitted_by']);
/** The answer columns of a CSV export, by header, row by row. */
function answers(text: string): Array<Record<string, string>> {
  const [head, ...rows] = csvRows(text);
  return rows.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i] ?? '']).filter(([h]) => !METADATA.has(h!))));
}

/** An AES key whose IV seed with `instanceId` has 0xFF at byte 1 and not at byte 0. */
function enketoOverflowKey(instanceId: string): Buffer {
  for (;;) {
    const key = randomBytes(32);
    const seed = ivSeed(instanceId, key);
    if (seed[1] === 0xff && seed[0] !== 0xff) return key;
  }
}

const versionOf = (xml: string) => /<data id="[^"]*" version="([^"]*)"/.exec(xml)?.[1] ?? null;

function instanceXml(idString: string, version: string, instanceId: string, i: number): string {
  return `<?xml version="1.0"?><data id="${idString}" version="${version}"><name>Amina ${i}</name><age>${30 + i}</age><household><size>${i + 1}</size><photo>house.jpg</photo></household><member><member_name>Kid ${i}</member_name></member><member><member_name>Teen ${i}</member_name></member><meta><instanceID>uuid:${instanceId}</instanceID></meta></data>`;
}

describe('encrypted data out: decrypt exports and the Briefcase pull', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let stranger: TestUser;
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pkcs1 = pair.privateKey.export({ format: 'pem', type: 'pkcs1' }) as string;
  const pkcs8 = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const spki = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const idString = `enc${Date.now().toString(36)}`;
  let selfPk: number;
  let plainPk: number;
  const photos: Buffer[] = [];
  const instanceIds: string[] = [];
  let halfId: string;
  let tamperedId: string;

  const as = (u: TestUser) => ({ Authorization: u.token });
  const upload = async (xml: string) => (await request(sut.url).post('/api/v1/forms').set(as(owner)).attach('xml_file', Buffer.from(xml), 'form.xml').expect(201)).body.formid as number;
  const formXml = async (pk: number) => (await request(sut.url).get(`/api/v1/forms/${pk}/form.xml`).set(as(owner)).expect(200)).text;
  function send(xml: string, parts: Map<string, Buffer>, only?: string[]) {
    let req = request(sut.url).post('/submission').set(as(owner)).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' });
    for (const [name, bytes] of parts) if (!only || only.includes(name)) req = req.attach(name, bytes, { filename: name, contentType: 'application/octet-stream' });
    return req;
  }
  const decrypt = (pk: number, body: Record<string, unknown>, who: TestUser = owner) =>
    request(sut.url).post(`/api/v1/forms/${pk}/decrypt`).set(as(who)).send(body).buffer(true).parse(binary);

  beforeAll(async () => {
    sut = await startTestCollectApp({ RATE_LIMIT_DECRYPT_PER_FORM: '12', RATE_LIMIT_DECRYPT_PER_IP: '1000', ENCRYPTION_KEK: randomBytes(32).toString('base64') });
    [owner, stranger] = await Promise.all([createTestUser(sut.app), createTestUser(sut.app)]);
    selfPk = await upload(demoXForm(idString));
    await request(sut.url).post(`/api/v1/forms/${selfPk}/encryption`).set(as(owner)).send({ mode: 'self', public_key: spki }).expect(201);
    const version = versionOf(await formXml(selfPk))!;
    // The same answers to a plaintext twin: its export is what the decrypted one must equal.
    plainPk = await upload(demoXForm(`${idString}_plain`));
    const base = await jpeg();
    for (let i = 0; i < 4; i++) {
      const instanceId = randomUUID();
      const photo = Buffer.concat([base, randomBytes(2_000 + i)]);
      // The last one as Enketo makes it, with a key whose IV seed has 0xFF at byte 1: Enketo's IV for the XML part then differs from Collect's (docs/encryption.md "Parts").
      const enketo = i === 3 ? { style: 'enketo' as const, aesKey: enketoOverflowKey(instanceId) } : {};
      const env = encryptSubmission({ publicKey: spki, formId: idString, version, instanceId, submissionXml: instanceXml(idString, version, instanceId, i), media: [{ name: 'house.jpg', bytes: photo }], ...enketo });
      // The first one comes in two sends (a split submission), as phones send large ones.
      if (i === 0) {
        await send(env.manifest, env.parts, ['submission.xml.enc']).expect(201);
        await send(env.manifest, env.parts, ['house.jpg.enc']).expect((r) => expect([201, 202]).toContain(r.status));
      } else await send(env.manifest, env.parts).expect(201);
      await send(instanceXml(`${idString}_plain`, '2026110101', randomUUID(), i), new Map([['house.jpg', photo]])).expect(201);
      photos.push(photo);
      instanceIds.push(instanceId);
    }
    // One whose photo never arrived: its answers are exported, the photo is named missing, and the pull does not list it.
    halfId = randomUUID();
    const half = encryptSubmission({ publicKey: spki, formId: idString, version, instanceId: halfId, submissionXml: instanceXml(idString, version, halfId, 9), media: [{ name: 'house.jpg', bytes: base }] });
    await send(half.manifest, half.parts, ['submission.xml.enc']).expect(201);
    // One whose photo was altered after it was encrypted: its answers decrypt, the ZIP's report names the failed signature.
    tamperedId = randomUUID();
    const tampered = encryptSubmission({ publicKey: spki, formId: idString, version, instanceId: tamperedId, submissionXml: instanceXml(idString, version, tamperedId, 8), media: [{ name: 'house.jpg', bytes: base }] });
    const altered = Buffer.from(tampered.parts.get('house.jpg.enc')!);
    altered[40] = altered[40]! ^ 0x01;
    await send(tampered.manifest, new Map([...tampered.parts, ['house.jpg.enc', altered]])).expect(201);
  }, 120_000);
  afterAll(() => sut?.close());

  it('decrypts to CSV, XLSX, JSON and a ZIP whose answers and photos equal the originals', async () => {
    const plainCsv = (await request(sut.url).get(`/api/v1/data/${plainPk}.csv`).set(as(owner)).buffer(true).parse(binary).expect(200)).body.toString();
    const csv = await decrypt(selfPk, { private_key: pkcs1, format: 'csv' }).expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['x-content-type-options']).toBe('nosniff');
    const decrypted = answers(csv.body.toString());
    expect(decrypted.slice(0, 4)).toEqual(answers(plainCsv));
    expect(decrypted[4]).toMatchObject({ name: 'Amina 9', 'household/photo': 'house.jpg' });
    expect(decrypted[5]).toMatchObject({ name: 'Amina 8' });
    expect(csv.body.toString().split('\n')[0]).toBe(plainCsv.split('\n')[0]);

    const zip = await unzip((await decrypt(selfPk, { private_key: pkcs8, format: 'zip' }).expect(200)).body);
    expect(zip.get('submissions.csv')!.toString()).toBe(csv.body.toString());
    instanceIds.forEach((id, i) => expect(zip.get(`${id}/house.jpg`)!.equals(photos[i]!)).toBe(true));
    expect(zip.has(`${halfId}/house.jpg`)).toBe(false);
    const report = csvRows(zip.get('decryption-report.csv')!.toString());
    expect(report.slice(0, 2)).toEqual([['_uuid', 'status', 'missing_files', 'reason', 'message'], [halfId, 'incomplete', 'house.jpg', '', '']]);
    expect(report[2]!.slice(0, 4)).toEqual([tamperedId, 'failed', '', 'signature_mismatch']);
    expect(report).toHaveLength(3);

    const json = JSON.parse((await decrypt(selfPk, { private_key: pkcs1, format: 'json' }).expect(200)).body.toString()) as Array<Record<string, unknown>>;
    expect(json.map((r) => r._uuid)).toEqual([...instanceIds, halfId, tamperedId]);
    expect(json[1]).toMatchObject({ name: 'Amina 1', age: '31', 'household/photo': 'house.jpg', _decryption: 'decrypted', _missing_files: [], _xform_id_string: idString });
    expect(json[1]!.member).toEqual([{ 'member/member_name': 'Kid 1' }, { 'member/member_name': 'Teen 1' }]);
    expect(json[4]).toMatchObject({ name: 'Amina 9', _decryption: 'incomplete', _missing_files: ['house.jpg'] });

    const xlsx = await decrypt(selfPk, { private_key: pkcs1, format: 'xlsx', include_labels: true }).expect(200);
    expect(xlsx.body.subarray(0, 2).toString()).toBe('PK');
  });

  it('refuses a wrong key, a wrong passphrase, both, none, strangers; and is rate-limited per form', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    expect((await decrypt(selfPk, { private_key: other, format: 'csv' }).expect(400)).body.toString()).toMatch(/not the key of any version/);
    await decrypt(selfPk, { private_key: 'not a key', format: 'csv' }).expect(400);
    await decrypt(selfPk, { passphrase: 'a long enough passphrase', format: 'csv' }).expect(400);
    await decrypt(selfPk, { passphrase: 'a long enough passphrase', private_key: pkcs1, format: 'csv' }).expect(400);
    await decrypt(selfPk, { format: 'csv' }).expect(400);
    await decrypt(selfPk, { private_key: pkcs1, format: 'pdf' }).expect(400);
    await decrypt(selfPk, { private_key: pkcs1, format: 'csv', key: 'x' }).expect(400);
    await decrypt(selfPk, { private_key: pkcs1, format: 'csv' }, stranger).expect(404);
    await request(sut.url).post(`/api/v1/forms/${selfPk}/decrypt`).send({ private_key: pkcs1, format: 'csv' }).expect(401);

    // Passphrase mode: the platform's key pair, the private key sealed under the passphrase.
    const pk = await upload(demoXForm(`${idString}_pp`));
    const passphrase = 'correct horse battery staple';
    await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(owner)).send({ mode: 'passphrase', passphrase }).expect(201);
    const xml = await formXml(pk);
    const instanceId = randomUUID();
    const photo = await jpeg();
    const env = encryptSubmission({ publicKey: /base64RsaPublicKey="([^"]*)"/.exec(xml)![1]!, formId: `${idString}_pp`, version: versionOf(xml), instanceId, submissionXml: instanceXml(`${idString}_pp`, versionOf(xml)!, instanceId, 0), media: [{ name: 'house.jpg', bytes: photo }] });
    await send(env.manifest, env.parts).expect(201);
    const zip = await unzip((await decrypt(pk, { passphrase, format: 'zip' }).expect(200)).body);
    expect(zip.get(`${instanceId}/house.jpg`)!.equals(photo)).toBe(true);
    expect((await decrypt(pk, { passphrase: 'the wrong passphrase', format: 'zip' }).expect(400)).body.toString()).toMatch(/does not open/);
    // The per-form count: 2 so far on this form; the 13th in the window is refused with Retry-After.
    let last = 0;
    for (let i = 0; i < 11; i++) last = (await decrypt(pk, { private_key: 'not a key', format: 'csv' })).status;
    expect(last).toBe(429);
  });

  it("decrypts a real ODK Collect envelope: its answers, and its missing photo named", async () => {
    const pk = await upload(central('form.xml'));
    await send(central('manifest.xml'), new Map([['submission.xml.enc', Buffer.from(central('submission.xml.enc.b64').replace(/\s+/g, ''), 'base64')]])).expect(201);
    const [row] = JSON.parse((await decrypt(pk, { private_key: central('priv.pem'), format: 'json' }).expect(200)).body.toString()) as Array<Record<string, unknown>>;
    const expected = central('expected-submission.xml');
    for (const [, name, value] of expected.matchAll(/<(\w+)>([^<]*)<\/\1>/g)) if (name !== 'instanceID') expect(row![name!]).toBe(value);
    expect(row).toMatchObject({ _decryption: 'incomplete', _missing_files: ['1561432532482.jpg'], _uuid: '99b303d9-6494-477b-a30d-d8aae8867335' });
  });

  it('a Briefcase pull of the encrypted form returns every complete envelope, which an independent decryptor opens into the original answers and photo', async () => {
    const { pulled, pages } = await briefcasePull(sut, owner.basic, '', idString, 3);
    expect(pages).toBe(3);
    // The altered one is complete too: the pull hands over what was received, as received.
    expect(pulled.map((p) => p.instanceId)).toEqual([...instanceIds, tamperedId].map((id) => `uuid:${id}`));
    for (const [i, p] of pulled.slice(0, instanceIds.length).entries()) {
      expect(p.data).toContain('encrypted="yes"');
      expect(p.data).toMatch(new RegExp(`instanceID="uuid:${instanceIds[i]}" submissionDate="`));
      expect([...p.files.keys()].sort()).toEqual(['house.jpg.enc', 'submission.xml.enc']);
      const opened = openEnvelope(p.data, p.files, pkcs8);
      const xml = instanceXml(idString, versionOf(await formXml(selfPk))!, instanceIds[i]!, i);
      // The decryptor reads Collect's IVs, as Briefcase does: the Enketo envelope's XML part comes out with its first block garbled, the rest as sent.
      if (i === 3) expect([opened.xml === xml, opened.xml.endsWith(xml.slice(16))]).toEqual([false, true]);
      else expect(opened.xml).toBe(xml);
      expect(opened.media.get('house.jpg')!.equals(photos[i]!)).toBe(true);
    }
  });

  it('a server-mode form decrypted on receipt is pulled as plaintext: the answers and the photo', async () => {
    const id = `${idString}_srv`;
    const pk = await upload(demoXForm(id));
    await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set(as(owner)).send({ mode: 'server' }).expect(201);
    const xml = await formXml(pk);
    const instanceId = randomUUID();
    const photo = Buffer.concat([await jpeg(), randomBytes(500)]);
    const plain = instanceXml(id, versionOf(xml)!, instanceId, 5);
    const env = encryptSubmission({ publicKey: /base64RsaPublicKey="([^"]*)"/.exec(xml)![1]!, formId: id, version: versionOf(xml), instanceId, submissionXml: plain, media: [{ name: 'house.jpg', bytes: photo }] });
    await send(env.manifest, env.parts).expect(201);
    const { pulled } = await briefcasePull(sut, owner.basic, `/${owner.username}`, id, 10);
    expect(pulled.map((p) => p.instanceId)).toEqual([`uuid:${instanceId}`]);
    expect(pulled[0]!.data).toContain('<name>Amina 5</name>');
    expect([...pulled[0]!.files.keys()]).toEqual(['house.jpg']);
    expect(pulled[0]!.files.get('house.jpg')!.equals(photo)).toBe(true);
  });

  // Last: it deletes submissions of the self-mode form.
  it('pages of envelopes go on past a page whose submissions are all deleted', async () => {
    const store = sut.app.get(EnvelopeStore);
    const pages = async () => {
      const out: string[][] = [];
      for (let after: number | null = 0; after !== null; ) {
        const page = await store.list(selfPk, { afterId: after, limit: 2 });
        out.push(page.envelopes.map((e) => e.instanceId));
        after = page.next;
      }
      return out;
    };
    const before = await pages();
    expect(before.flat().length).toBeGreaterThanOrEqual(6);
    // The second page's two submissions deleted: that page comes back empty, and the later ones still come.
    const data = (await request(sut.url).get(`/api/v1/data/${selfPk}`).set(as(owner)).expect(200)).body as Array<{ _id: number; _uuid: string }>;
    const idOf = (instanceId: string) => data.find((r) => `uuid:${r._uuid}` === instanceId || r._uuid === instanceId)!._id;
    for (const instanceId of before[1]!) await request(sut.url).delete(`/api/v1/data/${selfPk}/${idOf(instanceId)}`).set(as(owner)).expect(204);
    const after = await pages();
    expect(after[1]).toEqual([]);
    expect(after.flat()).toEqual(before.flat().filter((id) => !before[1]!.includes(id)));
  });
});
