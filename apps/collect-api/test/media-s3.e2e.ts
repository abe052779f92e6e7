import request from 'supertest';
import sharp from 'sharp';
import { DataSource } from 'typeorm';
import { demoWav } from '../src/seed/demo-media.js';
import { mediaFormDefinition, orientedJpeg, submitMedia } from './media-fixtures.js';
import { startLocalS3, type LocalS3 } from './submissions-s3rver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** Media on the S3 backend with signed redirects, behind a trusted ingress (forwarded headers). */
describe('media with S3 storage, signed redirects and forwarded headers', () => {
  let s3: LocalS3;
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let photo: Buffer;
  let items: Array<{ id: number; filename: string; mimetype: string; url: string; download_url: string }>;

  beforeAll(async () => {
    s3 = await startLocalS3();
    sut = await startTestCollectApp({ ...s3.env, MEDIA_S3_SIGNED_REDIRECT: 'true', MEDIA_S3_SIGNED_URL_TTL_SECONDS: '30', TRUST_FORWARDED_HEADERS: 'true' });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(mediaFormDefinition('media_s3')).expect(201)).body.formid;
    photo = await orientedJpeg();
    await submitMedia(sut, owner, formId, 'media_s3', {
      instanceId: '00000000-0000-4000-8000-0000000000aa', age: '30',
      photo: { name: 'p.jpg', data: photo, type: 'image/jpeg' }, interview: { name: 'a.wav', data: demoWav(2), type: 'audio/wav' },
    });
    items = (await request(sut.url).get(`/api/v1/media?xform=${formId}`).set('Authorization', owner.token).expect(200)).body;
  });
  afterAll(async () => {
    await sut.close();
    await s3.close();
  });

  it('builds {base_url} from trusted X-Forwarded-Proto/Host, and from PUBLIC_BASE_URL without them', async () => {
    const res = await request(sut.url).get(`/api/v1/media?xform=${formId}&page_size=1`).set('Authorization', owner.token)
      .set('X-Forwarded-Proto', 'https').set('X-Forwarded-Host', 'data.example.org').expect(200);
    expect(res.body[0].url).toBe(`https://data.example.org/api/v1/media/${res.body[0].id}`);
    expect(res.body[0].download_url).toBe(`https://data.example.org/api/v1/media/${res.body[0].id}.jpg`);
    expect(res.headers.link).toBe(`<https://data.example.org/api/v1/media?xform=${formId}&page_size=1&page=2>; rel="next"`);
    const detail = await request(sut.url).get(`/api/v1/media/${items[0].id}`).set('Authorization', owner.token).set('X-Forwarded-Host', 'data.example.org').expect(200);
    expect(detail.body.url).toBe(`https://data.example.org/api/v1/media/${items[0].id}`);
    expect(items[0].url).toBe(`http://localhost:3000/api/v1/media/${items[0].id}`);
    const forged = await request(sut.url).get(`/api/v1/media?xform=${formId}`).set('Authorization', owner.token).set('X-Forwarded-Host', 'evil.org/"><x').expect(200);
    expect(forged.body[0].url).toBe(items[0].url);
  });

  it('redirects full downloads to a short-lived signed URL that serves the bytes with the download headers', async () => {
    const p = items.find((i) => i.mimetype === 'image/jpeg')!;
    const res = await request(sut.url).get(`/api/v1/media/${p.id}.jpg`).set('Authorization', owner.token).expect(302);
    const location = new URL(res.headers.location);
    expect(location.origin).toBe(s3.endpoint);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('30');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const direct = await fetch(location);
    expect(direct.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await direct.arrayBuffer()), photo)).toBe(0);
    expect(direct.headers.get('content-type')).toBe('image/jpeg');
    expect(direct.headers.get('content-disposition')).toBe('attachment; filename="p.jpg"');
  });

  it('a signed redirect is inert on its own: the store is told an inert type and attachment, the redirect carries CSP and nosniff', async () => {
    // The object store cannot send a CSP: the type it serves must be inert by itself.
    const zip = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('<html><script>alert(1)</script></html>')]);
    await submitMedia(sut, owner, formId, 'media_s3', { instanceId: '00000000-0000-4000-8000-0000000000ab', age: '31', doc: { name: 'x.html', data: zip, type: 'text/html' } });
    const [doc] = ((await request(sut.url).get(`/api/v1/media?xform=${formId}`).set('Authorization', owner.token).expect(200)).body as typeof items).filter((i) => i.filename.endsWith('x.html'));
    expect(doc.mimetype).toBe('application/zip');
    // Also a row stored before the sniffing fix, with the active type the name asked for.
    await sut.app.get(DataSource).query(`UPDATE attachments SET mimetype = 'text/html' WHERE id = $1`, [doc.id]);
    const res = await request(sut.url).get(`/api/v1/files/${doc.id}`).query({ filename: doc.filename }).set('Authorization', owner.token).expect(302);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const location = new URL(res.headers.location);
    expect(location.searchParams.get('response-content-type')).toBe('application/octet-stream');
    expect(location.searchParams.get('response-content-disposition')).toBe('attachment; filename="x.html"');
    const direct = await fetch(location);
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-type')).toBe('application/octet-stream');
    expect(direct.headers.get('content-disposition')).toBe('attachment; filename="x.html"');
  });

  it('streams ranges itself, and stores variants in the bucket', async () => {
    const a = items.find((i) => i.mimetype === 'audio/wav')!;
    const wav = demoWav(2);
    const part = await request(sut.url).get(`/api/v1/media/${a.id}.wav`).set('Authorization', owner.token).set('Range', 'bytes=0-0').buffer(true)
      .parse((r, cb) => { const c: Buffer[] = []; r.on('data', (d: Buffer) => c.push(d)); r.on('end', () => cb(null, Buffer.concat(c))); }).expect(206);
    expect(Buffer.compare(part.body, wav.subarray(0, 1))).toBe(0);
    const p = items.find((i) => i.mimetype === 'image/jpeg')!;
    const v = await request(sut.url).get(`/api/v1/media/${p.id}-small.jpg`).set('Authorization', owner.token).expect(302);
    const small = Buffer.from(await (await fetch(v.headers.location)).arrayBuffer());
    expect(await sharp(small).metadata()).toMatchObject({ width: 120, height: 240 });
  });
});
