import request from 'supertest';
import { sendPartByPart } from './streamed-body.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Form media uploads (`POST /api/v1/metadata`) are checked before their file is read
 * (docs/security.md, "Bounded work for anonymous and unauthorised callers"): the fields, the
 * name the file will have and the caller's role, when the `data_file` part begins. A caller who
 * may not add media was answered only after the whole file had been read (19 MB, then 404).
 * Measured in bytes: the client sends as fast as the server reads and counts what it could hand
 * over before the answer came.
 */

const BODY_BYTES = 64 * 1024 * 1024;

/** A multipart body: the fields, then a `data_file` part of `fileBytes` zeros; sent chunk by chunk as the server takes it. */
function streamedUpload(url: string, authorization: string, fields: Record<string, string>, fileBytes: number, fileFirst = false): Promise<{ status: number; body: string; sentBytes: number; totalBytes: number; connection: string | undefined }> {
  const head = Object.entries(fields).map(([k, v]) => `--B\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('');
  const fileHead = `--B\r\nContent-Disposition: form-data; name="data_file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const tail = '\r\n--B--\r\n';
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  const chunks = Math.ceil(fileBytes / chunk.length);
  const parts: Buffer[] = fileFirst
    ? [Buffer.from(fileHead), ...Array.from({ length: chunks }, () => chunk), Buffer.from(`\r\n${head}--B--\r\n`)]
    : [Buffer.from(head + fileHead), ...Array.from({ length: chunks }, () => chunk), Buffer.from(tail)];
  const totalBytes = parts.reduce((n, p) => n + p.length, 0);
  return sendPartByPart(url, '/api/v1/metadata', { Authorization: authorization, 'Content-Type': 'multipart/form-data; boundary=B' }, parts).then((answer) => ({ ...answer, totalBytes }));
}

describe('security: form media uploads are refused before their file is read', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let stranger: TestUser;
  let formId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp({ FORM_MEDIA_MAX_BYTES: String(128 * 1024 * 1024) });
    owner = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
    stranger = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: 'media_role', title: 'M', fields: [{ name: 'a', type: 'text', label: 'A' }] }).expect(201)).body.formid;
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
  }, 60_000);
  afterAll(() => sut.close());

  const fields = () => ({ xform: String(formId), data_type: 'media', data_value: 'big.csv' });
  const count = async () => (await request(sut.url).get(`/api/v1/metadata?xform=${formId}`).set('Authorization', owner.token).expect(200)).body.length as number;

  it.each([
    { label: 'a stranger (404)', who: () => stranger, status: 404, fields },
    { label: 'a readonly user (403)', who: () => reader, status: 403, fields },
    { label: 'a bad data_value (400)', who: () => owner, status: 400, fields: () => ({ ...fields(), data_value: 'a\u0001b.csv' }) },
    { label: 'a form id that does not exist (404)', who: () => owner, status: 404, fields: () => ({ ...fields(), xform: '99999' }) },
  ])('$label: answered after less than a quarter of a 64 MiB body, with Connection: close', async ({ who, status, fields: f }) => {
    const before = await count();
    const res = await streamedUpload(sut.url, who().token, f(), BODY_BYTES);
    expect(res.status).toBe(status);
    expect(res.connection).toBe('close');
    expect(res.sentBytes).toBeLessThan(res.totalBytes / 4);
    expect(await count()).toBe(before);
  }, 120_000);

  it('data_file before xform: 400 naming xform, before the file is read', async () => {
    const res = await streamedUpload(sut.url, owner.token, { ...fields(), data_value: 'first.csv' }, BODY_BYTES, true);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ xform: ['A form id, sent before data_file.'] });
    expect(res.sentBytes).toBeLessThan(res.totalBytes / 4);
  }, 120_000);

  it('the owner still uploads (fields first, then the file), and a plain-field file still works when small', async () => {
    const res = await streamedUpload(sut.url, owner.token, fields(), 1024 * 1024);
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ xform: formId, data_value: 'big.csv', size: 1024 * 1024 });
    await request(sut.url).post('/api/v1/metadata').set('Authorization', owner.token).field('xform', String(formId)).field('data_type', 'media').field('data_value', 'plain.csv').field('data_file', 'a,b\n1,2\n').expect(201);
  }, 120_000);
});
