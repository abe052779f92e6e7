import request from 'supertest';
import { createMediaFixture, type MediaFixture } from './media-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';

interface Item { id: number; filename: string }

/**
 * Image variants are made on request: the one kind of background work a reader starts on
 * media, counted per requester (docs/security.md, "Rate limits, quotas and forwarding input").
 */
describe('media: image variants made on request are counted per user', () => {
  let sut: TestCollectApp;
  let fx: MediaFixture;
  let byName: Record<string, Item>;

  beforeAll(async () => {
    sut = await startTestCollectApp({ MEDIA_VARIANTS_PER_USER_PER_MINUTE: '3' });
    fx = await createMediaFixture(sut);
    const items = (await request(sut.url).get('/api/v1/media').set('Authorization', fx.owner.token).expect(200)).body as Item[];
    byName = Object.fromEntries(items.map((i) => [i.filename.split('/').pop()!, i]));
  }, 120_000);
  afterAll(() => sut?.close());

  it('past MEDIA_VARIANTS_PER_USER_PER_MINUTE new variants: 429 with Retry-After; variants already made are still served', async () => {
    const get = (path: string) => request(sut.url).get(path).set('Authorization', fx.owner.token);
    const p1 = byName['p1.jpg'].id;
    const p4 = byName['p4.png'].id;
    for (const size of ['small', 'medium', 'large']) await get(`/api/v1/media/${p1}-${size}.jpg`).expect(200);
    const limited = await get(`/api/v1/media/${p4}-small.png`).expect(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.detail).toMatch(/image variants made a minute per user/);
    await get(`/api/v1/files/${p4}?filename=${encodeURIComponent(byName['p4.png'].filename)}&suffix=medium`).expect(429);
    // Made once, served from storage: not counted.
    for (const size of ['small', 'medium', 'large']) await get(`/api/v1/media/${p1}-${size}.jpg`).expect(200);
    // The originals are not variants.
    await get(`/api/v1/media/${p4}.png`).expect(200);
  });
});
