import request from 'supertest';
import sharp from 'sharp';
import { demoAvi, demoWav } from '../src/seed/demo-media.js';
import type { TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** A form with one question of each media kind (image inside a group, for field_xpath). */
export function mediaFormDefinition(idString: string) {
  return {
    id_string: idString,
    title: idString,
    fields: [
      { name: 'respondent', type: 'text', label: 'Respondent' },
      { name: 'age', type: 'integer', label: 'Age' },
      { name: 'visit', type: 'group', label: 'Visit', children: [{ name: 'photo', type: 'image', label: 'Photo' }] },
      { name: 'interview', type: 'audio', label: 'Interview' },
      { name: 'walk', type: 'video', label: 'Walk-through' },
      { name: 'doc', type: 'file', label: 'Document' },
    ],
  };
}

export interface MediaFile {
  name: string;
  data: Buffer;
  type: string;
}

/** An 800×400 JPEG whose EXIF says "rotate 90° clockwise" (orientation 6): shown 400×800. */
export async function orientedJpeg(): Promise<Buffer> {
  const left = await sharp({ create: { width: 400, height: 400, channels: 3, background: { r: 220, g: 20, b: 20 } } }).png().toBuffer();
  return sharp({ create: { width: 800, height: 400, channels: 3, background: { r: 20, g: 20, b: 220 } } })
    .composite([{ input: left, left: 0, top: 0 }])
    .jpeg({ quality: 85 })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

export function pdf(text: string): Buffer {
  return Buffer.from(`%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% ${text}\ntrailer << /Root 1 0 R >>\n%%EOF\n`, 'latin1');
}

/** JPEG magic followed by garbage: stored as image/jpeg, undecodable. */
export function corruptJpeg(): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('not really a jpeg '.repeat(20))]);
}

/** One OpenRosa submission (multipart, as ODK Collect sends it); returns the submission id. */
export async function submitMedia(
  sut: TestCollectApp, user: TestUser, formId: number, idString: string,
  o: { instanceId: string; age: string; photo?: MediaFile; interview?: MediaFile; walk?: MediaFile; doc?: MediaFile },
): Promise<number> {
  const el = (tag: string, f?: MediaFile) => (f ? `<${tag}>${f.name}</${tag}>` : '');
  const xml = `<?xml version="1.0"?><data id="${idString}"><respondent>r${o.age}</respondent><age>${o.age}</age><visit>${el('photo', o.photo)}</visit>${el('interview', o.interview)}${el('walk', o.walk)}${el('doc', o.doc)}<meta><instanceID>uuid:${o.instanceId}</instanceID></meta></data>`;
  let req = request(sut.url).post('/submission').set('Authorization', user.token).set('X-OpenRosa-Version', '1.0')
    .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' });
  for (const f of [o.photo, o.interview, o.walk, o.doc]) if (f) req = req.attach(f.name, f.data, { filename: f.name, contentType: f.type });
  await req.expect(201);
  const rows = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', user.token).expect(200)).body as Array<{ _id: number; _uuid: string }>;
  return rows.find((r) => r._uuid === o.instanceId)!._id;
}

export interface MediaFixture {
  owner: TestUser;
  formA: number;
  formB: number;
  formC: number;
  merged: number;
  dataview: number;
  /** s1..s4 live submissions (s3 is deleted), s5 on the deleted form C. */
  sub: Record<'s1' | 's2' | 's3' | 's4' | 's5', number>;
  /** Uploaded bytes by file name. */
  bytes: Record<string, Buffer>;
}

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Several forms, a merged dataset, a dataview with a query, deleted instances and a deleted
 * form, with real image/audio/video/document files:
 * - form A: s1 (age 25: photo p1.jpg EXIF-rotated, i1.wav, w1.avi, d1.pdf),
 *           s2 (age 40: corrupt c2.jpg, d2.pdf), s3 (age 50: p3.jpg; deleted);
 * - form B: s4 (age 60: p4.png, i4.wav);
 * - form C: s5 (p5.jpg), then the form is deleted;
 * - merged dataset A+B; dataview on A with `age > 30` (matches s2, s3).
 */
export async function createMediaFixture(sut: TestCollectApp): Promise<MediaFixture> {
  const owner = await createTestUser(sut.app);
  const auth = (r: request.Test) => r.set('Authorization', owner.token);
  const mkForm = async (id: string) => (await auth(request(sut.url).post('/api/v1/forms')).send(mediaFormDefinition(id)).expect(201)).body.formid as number;
  const formA = await mkForm('media_a');
  const formB = await mkForm('media_b');
  const formC = await mkForm('media_c');
  const png = await sharp({ create: { width: 300, height: 1000, channels: 4, background: { r: 0, g: 90, b: 200, alpha: 1 } } }).png().toBuffer();
  const files: Record<string, MediaFile> = {
    'p1.jpg': { name: 'p1.jpg', data: await orientedJpeg(), type: 'image/jpeg' },
    'i1.wav': { name: 'i1.wav', data: demoWav(1), type: 'audio/wav' },
    'w1.avi': { name: 'w1.avi', data: await demoAvi(1, 3), type: 'video/x-msvideo' },
    'd1.pdf': { name: 'd1.pdf', data: pdf('one'), type: 'application/pdf' },
    'c2.jpg': { name: 'c2.jpg', data: corruptJpeg(), type: 'image/jpeg' },
    'd2.pdf': { name: 'd2.pdf', data: pdf('two'), type: 'application/pdf' },
    'p3.jpg': { name: 'p3.jpg', data: await orientedJpeg(), type: 'image/jpeg' },
    'p4.png': { name: 'p4.png', data: png, type: 'image/png' },
    'i4.wav': { name: 'i4.wav', data: demoWav(4), type: 'audio/wav' },
    'p5.jpg': { name: 'p5.jpg', data: await orientedJpeg(), type: 'image/jpeg' },
  };
  const s1 = await submitMedia(sut, owner, formA, 'media_a', { instanceId: uuid(1), age: '25', photo: files['p1.jpg'], interview: files['i1.wav'], walk: files['w1.avi'], doc: files['d1.pdf'] });
  const s2 = await submitMedia(sut, owner, formA, 'media_a', { instanceId: uuid(2), age: '40', photo: files['c2.jpg'], doc: files['d2.pdf'] });
  const s3 = await submitMedia(sut, owner, formA, 'media_a', { instanceId: uuid(3), age: '50', photo: files['p3.jpg'] });
  const s4 = await submitMedia(sut, owner, formB, 'media_b', { instanceId: uuid(4), age: '60', photo: files['p4.png'], interview: files['i4.wav'] });
  const s5 = await submitMedia(sut, owner, formC, 'media_c', { instanceId: uuid(5), age: '70', photo: files['p5.jpg'] });
  await auth(request(sut.url).delete(`/api/v1/data/${formA}/${s3}`)).expect(204);
  const merged = (await auth(request(sut.url).post('/api/v1/merged-datasets')).send({ name: 'AB', xforms: [formA, formB] }).expect(201)).body.id as number;
  const dataview = (await auth(request(sut.url).post('/api/v1/dataviews')).send({ name: 'older', xform: formA, columns: ['age'], query: [{ column: 'age', filter: '>', value: 30 }] }).expect(201)).body
    .id as number;
  await auth(request(sut.url).delete(`/api/v1/forms/${formC}`)).expect(204);
  return { owner, formA, formB, formC, merged, dataview, sub: { s1, s2, s3, s4, s5 }, bytes: Object.fromEntries(Object.entries(files).map(([k, f]) => [k, f.data])) };
}
