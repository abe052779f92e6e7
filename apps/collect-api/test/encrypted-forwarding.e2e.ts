import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { demoXForm, jpeg } from './forms-fixtures.js';
import { encryptSubmission } from './odk-encryptor.js';
import { FAST_FORWARDING, until, type ReceivedRequest } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';

/**
 * Rest services and encrypted submissions (docs/encryption.md "Forwarding"): a server-mode form's
 * generic_json service receives the decrypted payload (its default), an `envelope` service the
 * envelope, and a passphrase-mode form's services skip, their delivery log saying why. Real
 * receiver on 127.0.0.1, the worker's modules in this process.
 */
describe('rest services: encrypted_submissions', () => {
  const suite = withWorkerAppAndReceiver({ ...FAST_FORWARDING, ENCRYPTION_KEK: randomBytes(32).toString('base64') });
  const api = () => request(suite.sut.url);
  const auth = () => ({ Authorization: suite.owner.token });
  const bodyOf = (r: ReceivedRequest) => JSON.parse(r.body.toString()) as Record<string, unknown>;
  const at = (path: string) => () => suite.rx.requests.find((r) => r.url === path);

  async function encryptedForm(idString: string, body: Record<string, unknown>): Promise<{ pk: number; version: string; publicKey: string }> {
    const pk = (await api().post('/api/v1/forms').set(auth()).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
    await api().post(`/api/v1/forms/${pk}/encryption`).set(auth()).send(body).expect(201);
    const xml = (await api().get(`/api/v1/forms/${pk}/form.xml`).set(auth()).expect(200)).text;
    return { pk, version: /<data id="[^"]*" version="([^"]*)"/.exec(xml)![1]!, publicKey: /base64RsaPublicKey="([^"]*)"/.exec(xml)![1]! };
  }
  async function submitEncrypted(f: { version: string; publicKey: string }, idString: string): Promise<string> {
    const instanceId = randomUUID();
    const xml = `<data id="${idString}" version="${f.version}"><name>Amina</name><household><photo>photo.jpg</photo></household><meta><instanceID>uuid:${instanceId}</instanceID></meta></data>`;
    const env = encryptSubmission({ publicKey: f.publicKey, formId: idString, version: f.version, instanceId: `uuid:${instanceId}`, submissionXml: xml, media: [{ name: 'photo.jpg', bytes: await jpeg() }] });
    let req = api().post('/submission').set(auth()).attach('xml_submission_file', Buffer.from(env.manifest), 'submission.xml');
    for (const [name, bytes] of env.parts) req = req.attach(name, bytes, name);
    await req.expect(201);
    return instanceId;
  }
  const service = async (body: Record<string, unknown>) => (await api().post('/api/v1/restservices').set(auth()).send(body).expect(201)).body as { id: number; encrypted_submissions: string | null };

  it('server mode: the default service gets the decrypted payload, an envelope service the envelope', async () => {
    const f = await encryptedForm('fwd_server', { mode: 'server' });
    const plain = await service({ xform: f.pk, name: 'generic_json', service_url: `${suite.rx.url}/dec` });
    expect(plain.encrypted_submissions).toBeNull();
    expect((await service({ xform: f.pk, name: 'generic_json', service_url: `${suite.rx.url}/env`, encrypted_submissions: 'envelope' })).encrypted_submissions).toBe('envelope');
    const instanceId = await submitEncrypted(f, 'fwd_server');

    const decrypted = bodyOf(await until('the decrypted payload', at('/dec')));
    expect(decrypted).toMatchObject({ name: 'Amina', 'household/photo': 'photo.jpg', _uuid: instanceId, _encrypted: true, _decryption: 'decrypted' });
    expect((decrypted._attachments as Array<{ name: string }>).map((a) => a.name)).toEqual(['photo.jpg']);

    const envelope = bodyOf(await until('the envelope', at('/env')));
    expect(envelope).toMatchObject({ _uuid: instanceId, _encrypted: true, encryptedXmlFile: 'submission.xml.enc', base64EncryptedKey: expect.any(String), base64EncryptedElementSignature: expect.any(String) });
    expect(envelope).not.toHaveProperty('name');
    expect((envelope.files as Array<{ name: string; download_url: string }>).map((x) => x.name)).toEqual(['photo.jpg.enc', 'submission.xml.enc']);
  });

  it('passphrase mode: services skip by default and the delivery log says why; decrypted is refused there, envelope is generic_json only', async () => {
    const f = await encryptedForm('fwd_pass', { mode: 'passphrase', passphrase: 'correct horse battery staple' });
    const s = await service({ xform: f.pk, name: 'generic_json', service_url: `${suite.rx.url}/pass` });
    const refused = await api().post('/api/v1/restservices').set(auth()).send({ xform: f.pk, name: 'generic_json', service_url: `${suite.rx.url}/x`, encrypted_submissions: 'decrypted' }).expect(400);
    expect(refused.body.encrypted_submissions[0]).toMatch(/server mode/);
    const xml = await api().post('/api/v1/restservices').set(auth()).send({ xform: f.pk, name: 'generic_xml', service_url: `${suite.rx.url}/y`, encrypted_submissions: 'envelope' }).expect(400);
    expect(xml.body.encrypted_submissions[0]).toMatch(/generic_json/);
    await api().post('/api/v1/restservices').set(auth()).send({ xform: f.pk, name: 'generic_json', service_url: `${suite.rx.url}/z`, encrypted_submissions: 'secret' }).expect(400);
    await submitEncrypted(f, 'fwd_pass');
    const log = await until('the skipped attempt', async () => {
      const entries = (await api().get(`/api/v1/restservices/${s.id}/deliveries`).set(auth()).expect(200)).body as Array<{ status: string; error: string | null }>;
      return entries.find((e) => e.status === 'skipped');
    });
    expect(log.error).toMatch(/encrypted submission not sent: .*passphrase-mode/);
    expect(suite.rx.requests.filter((r) => r.url === '/pass')).toHaveLength(0);
  });
});
