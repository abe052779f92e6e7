import request from 'supertest';
import sharp from 'sharp';
import { MediaVariantsService } from '../src/media/media-variants.service.js';
import { createMediaFixture, type MediaFixture } from './media-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';

interface Item { id: number; filename: string; mimetype: string }

function binary(res: request.Response, cb: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

describe('media downloads and variants', () => {
  let sut: TestCollectApp;
  let fx: MediaFixture;
  let byName: Record<string, Item>;

  const get = (path: string) => request(sut.url).get(path).set('Authorization', fx.owner.token).buffer(true).parse(binary);
  const dims = async (b: Buffer) => {
    const m = await sharp(b).metadata();
    return { width: m.width, height: m.height, orientation: m.orientation, exif: m.exif };
  };

  beforeAll(async () => {
    sut = await startTestCollectApp();
    fx = await createMediaFixture(sut);
    const items = (await request(sut.url).get('/api/v1/media').set('Authorization', fx.owner.token).expect(200)).body as Item[];
    byName = Object.fromEntries(items.map((i) => [i.filename.split('/').pop()!, i]));
  });
  afterAll(() => sut.close());

  it('streams the submitted bytes by .ext, by Accept, and by /files with the stored filename', async () => {
    for (const name of ['p1.jpg', 'i1.wav', 'w1.avi', 'd1.pdf', 'p4.png']) {
      const item = byName[name];
      const ext = name.split('.').pop();
      const res = await get(`/api/v1/media/${item.id}.${ext}`).expect(200);
      expect(Buffer.compare(res.body, fx.bytes[name])).toBe(0);
      expect(res.headers['content-type']).toBe(item.mimetype);
      expect(res.headers['content-length']).toBe(String(fx.bytes[name].length));
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}"`);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers.etag).toMatch(/^"\S+"$/);
      const accepted = await get(`/api/v1/media/${item.id}`).set('Accept', `${item.mimetype}`).expect(200);
      expect(Buffer.compare(accepted.body, fx.bytes[name])).toBe(0);
      const files = await get(`/api/v1/files/${item.id}?filename=${encodeURIComponent(item.filename)}`).expect(200);
      expect(Buffer.compare(files.body, fx.bytes[name])).toBe(0);
    }
    // A registered extension of the type works too (jpeg for image/jpeg).
    await get(`/api/v1/media/${byName['p1.jpg'].id}.jpeg`).expect(200);
  });

  it('answers JSON without a matching Accept, and 404 for a wrong extension or filename', async () => {
    const item = byName['p1.jpg'];
    const json = await request(sut.url).get(`/api/v1/media/${item.id}`).set('Authorization', fx.owner.token).set('Accept', 'application/json').expect(200);
    expect(json.body).toMatchObject({ id: item.id, filename: item.filename, download_url: `http://localhost:3000/api/v1/media/${item.id}.jpg` });
    expect(json.body).not.toHaveProperty('field_xpath');
    expect((await request(sut.url).get(`/api/v1/media/${item.id}`).set('Authorization', fx.owner.token).set('Accept', '*/*').expect(200)).body.id).toBe(item.id);
    expect((await request(sut.url).get(`/api/v1/media/${item.id}.json`).set('Authorization', fx.owner.token).expect(200)).body.id).toBe(item.id);
    await get(`/api/v1/media/${item.id}.png`).expect(404);
    await get(`/api/v1/media/${item.id}.wav`).expect(404);
    await get(`/api/v1/media/${item.id}-huge.jpg`).expect(404);
    await get(`/api/v1/media/abc`).expect(404);
    await get(`/api/v1/files/${item.id}?filename=${encodeURIComponent(byName['d1.pdf'].filename)}`).expect(404);
    await get(`/api/v1/files/${item.id}?filename=p1.jpg`).expect(404);
    expect((await request(sut.url).get(`/api/v1/files/${item.id}`).set('Authorization', fx.owner.token).expect(400)).body).toEqual({ filename: ['This field is required.'] });
    expect((await request(sut.url).get(`/api/v1/files/${item.id}?filename=${encodeURIComponent(item.filename)}&suffix=tiny`).set('Authorization', fx.owner.token).expect(400)).body).toEqual({
      suffix: ['One of small, medium, large.'],
    });
  });

  it('honours Range (206, 416) and ETag (304)', async () => {
    const item = byName['i1.wav'];
    const whole = fx.bytes['i1.wav'];
    const part = await get(`/api/v1/media/${item.id}.wav`).set('Range', 'bytes=10-19').expect(206);
    expect(Buffer.compare(part.body, whole.subarray(10, 20))).toBe(0);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${whole.length}`);
    expect(part.headers['content-length']).toBe('10');
    const tail = await get(`/api/v1/media/${item.id}.wav`).set('Range', 'bytes=-5').expect(206);
    expect(Buffer.compare(tail.body, whole.subarray(whole.length - 5))).toBe(0);
    const open = await get(`/api/v1/media/${item.id}.wav`).set('Range', `bytes=${whole.length - 3}-`).expect(206);
    expect(open.body.length).toBe(3);
    const bad = await get(`/api/v1/media/${item.id}.wav`).set('Range', `bytes=${whole.length}-`).expect(416);
    expect(bad.headers['content-range']).toBe(`bytes */${whole.length}`);
    const first = await get(`/api/v1/media/${item.id}.wav`).expect(200);
    const etag = first.headers.etag;
    const again = await get(`/api/v1/media/${item.id}.wav`).set('If-None-Match', etag).expect(304);
    expect(again.body.length).toBe(0);
    await get(`/api/v1/media/${item.id}.wav`).set('If-None-Match', '"other"').expect(200);
    const head = await request(sut.url).head(`/api/v1/media/${item.id}.wav`).set('Authorization', fx.owner.token).expect(200);
    expect(head.headers['content-length']).toBe(String(whole.length));
    expect(head.headers.etag).toBe(first.headers.etag);
    // If-Range with a stale validator sends the whole file.
    expect((await get(`/api/v1/media/${item.id}.wav`).set('Range', 'bytes=0-1').set('If-Range', '"stale"').expect(200)).body.length).toBe(whole.length);
  });

  it('serves variants with the right longest side, EXIF orientation applied and metadata stripped', async () => {
    const item = byName['p1.jpg'];
    const original = await dims(fx.bytes['p1.jpg']);
    expect(original).toMatchObject({ width: 800, height: 400, orientation: 6 });
    for (const [variant, side] of [['small', 240], ['medium', 640]] as const) {
      const res = await get(`/api/v1/media/${item.id}-${variant}.jpg`).expect(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="p1-${variant}.jpg"`);
      const d = await dims(res.body);
      // Portrait after rotation: the 800 px side is now the height.
      expect(d).toMatchObject({ height: side, width: side / 2 });
      expect(d.orientation).toBeUndefined();
      expect(d.exif).toBeUndefined();
      const viaFiles = await get(`/api/v1/files/${item.id}?filename=${encodeURIComponent(item.filename)}&suffix=${variant}`).expect(200);
      expect(Buffer.compare(viaFiles.body, res.body)).toBe(0);
    }
    // Large: 1280 would enlarge an 800 px image; variants never upscale.
    expect(await dims((await get(`/api/v1/media/${item.id}-large.jpg`).expect(200)).body)).toMatchObject({ width: 400, height: 800, orientation: undefined });
    const png = await get(`/api/v1/media/${byName['p4.png'].id}-small.png`).expect(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(await dims(png.body)).toMatchObject({ width: 72, height: 240 });
    // A variant supports Range and ETag like any file.
    const v = await get(`/api/v1/media/${item.id}-small.jpg`).expect(200);
    await get(`/api/v1/media/${item.id}-small.jpg`).set('If-None-Match', v.headers.etag).expect(304);
    expect((await get(`/api/v1/media/${item.id}-small.jpg`).set('Range', 'bytes=0-3').expect(206)).body.length).toBe(4);
  });

  it('generates a variant once for concurrent first requests', async () => {
    const variants = sut.app.get(MediaVariantsService);
    const item = byName['p4.png'];
    const before = variants.generated;
    const results = await Promise.all(Array.from({ length: 6 }, () => get(`/api/v1/media/${item.id}-medium.png`)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.toString('base64'))).size).toBe(1);
    expect(variants.generated - before).toBe(1);
    await get(`/api/v1/media/${item.id}-medium.png`).expect(200);
    expect(variants.generated - before).toBe(1);
  });

  it('returns the original for variants of non-images, and a clear 422 for a corrupt image whose original stays downloadable', async () => {
    const wav = byName['i1.wav'];
    const small = await get(`/api/v1/media/${wav.id}-small.wav`).expect(200);
    expect(Buffer.compare(small.body, fx.bytes['i1.wav'])).toBe(0);
    expect(small.headers['content-type']).toBe('audio/wav');
    const corrupt = byName['c2.jpg'];
    const res = await request(sut.url).get(`/api/v1/media/${corrupt.id}-small.jpg`).set('Authorization', fx.owner.token).expect(422);
    expect(res.body.detail).toMatch(/not a readable image/);
    await request(sut.url).get(`/api/v1/files/${corrupt.id}?filename=${encodeURIComponent(corrupt.filename)}&suffix=medium`).set('Authorization', fx.owner.token).expect(422);
    const original = await get(`/api/v1/media/${corrupt.id}.jpg`).expect(200);
    expect(Buffer.compare(original.body, fx.bytes['c2.jpg'])).toBe(0);
  });

  it('never serves attachments of deleted instances or deleted forms', async () => {
    // s3 (deleted instance) and s5 (deleted form) hold the ids missing from the listing: their ids are the ones missing from the listing: probe the neighbours of known ids.
    const known = new Set(Object.values(byName).map((i) => i.id));
    const max = Math.max(...known);
    for (let id = 1; id <= max + 1; id++) {
      if (known.has(id)) continue;
      await get(`/api/v1/media/${id}`).expect(404);
      await get(`/api/v1/media/${id}.jpg`).expect(404);
    }
  });
});
