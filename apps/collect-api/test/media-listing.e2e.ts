import request from 'supertest';
import { createMediaFixture, type MediaFixture } from './media-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';

interface Item {
  id: number; url: string; filename: string; mimetype: string; xform: number; instance: number;
  download_url: string; small_download_url: string; medium_download_url: string; field_xpath?: string | null;
}

const BASE = 'http://localhost:3000';

describe('media listing: filters, URL formats, pagination, count', () => {
  let sut: TestCollectApp;
  let fx: MediaFixture;

  const get = (path: string) => request(sut.url).get(path).set('Authorization', fx.owner.token);
  const names = (items: Item[]) => items.map((i) => i.filename.split('/').pop()).sort();
  async function list(query: string): Promise<Item[]> {
    const res = await get(`/api/v1/media${query}`).expect(200);
    // The count endpoint agrees with the listing and its X-Total-Count for every filter.
    const count = (await get(`/api/v1/media/count${query}`).expect(200)).body;
    expect(count).toEqual({ count: res.body.length });
    expect(res.headers['x-total-count']).toBe(String(res.body.length));
    return res.body;
  }

  beforeAll(async () => {
    sut = await startTestCollectApp();
    fx = await createMediaFixture(sut);
  });
  afterAll(() => sut.close());

  it('lists every live attachment of the forms the caller sees (deleted instances and forms never appear)', async () => {
    const all = await list('');
    expect(names(all)).toEqual(['c2.jpg', 'd1.pdf', 'd2.pdf', 'i1.wav', 'i4.wav', 'p1.jpg', 'p4.png', 'w1.avi']);
    expect(all.map((i) => i.id)).toEqual([...all.map((i) => i.id)].sort((a, b) => a - b));
    const json = await get('/api/v1/media.json').expect(200);
    expect(json.body).toEqual(all);
    await get('/api/v1/media/').expect(200);
    expect((await get('/api/v1/').expect(200)).body.media).toBe(`${BASE}/api/v1/media`);
  });

  it('filters by xform, instance and type, alone and combined', async () => {
    expect(names(await list(`?xform=${fx.formA}`))).toEqual(['c2.jpg', 'd1.pdf', 'd2.pdf', 'i1.wav', 'p1.jpg', 'w1.avi']);
    expect(names(await list(`?xform=${fx.formB}`))).toEqual(['i4.wav', 'p4.png']);
    expect(names(await list(`?instance=${fx.sub.s1}`))).toEqual(['d1.pdf', 'i1.wav', 'p1.jpg', 'w1.avi']);
    expect(names(await list('?type=image'))).toEqual(['c2.jpg', 'p1.jpg', 'p4.png']);
    expect(names(await list('?type=audio'))).toEqual(['i1.wav', 'i4.wav']);
    expect(names(await list('?type=video'))).toEqual(['w1.avi']);
    expect(names(await list('?type=document'))).toEqual(['d1.pdf', 'd2.pdf']);
    expect(names(await list('?type=file'))).toEqual(['d1.pdf', 'd2.pdf']);
    expect(names(await list(`?xform=${fx.formA}&type=image`))).toEqual(['c2.jpg', 'p1.jpg']);
    expect(names(await list(`?xform=${fx.formB}&type=document`))).toEqual([]);
    expect(names(await list(`?instance=${fx.sub.s1}&type=audio`))).toEqual(['i1.wav']);
    expect(names(await list(`?xform=${fx.formA}&instance=${fx.sub.s4}`))).toEqual([]);
  });

  it('filters by merged dataset and by dataview (the query applied to the instances)', async () => {
    expect(names(await list(`?merged_xform=${fx.merged}`))).toEqual(['c2.jpg', 'd1.pdf', 'd2.pdf', 'i1.wav', 'i4.wav', 'p1.jpg', 'p4.png', 'w1.avi']);
    expect(names(await list(`?merged_xform=${fx.merged}&type=image`))).toEqual(['c2.jpg', 'p1.jpg', 'p4.png']);
    expect(names(await list(`?merged_xform=${fx.merged}&xform=${fx.formB}`))).toEqual(['i4.wav', 'p4.png']);
    // age > 30 matches s2 and the deleted s3: only s2's files.
    expect(names(await list(`?dataview=${fx.dataview}`))).toEqual(['c2.jpg', 'd2.pdf']);
    expect(names(await list(`?dataview=${fx.dataview}&type=document`))).toEqual(['d2.pdf']);
    expect(names(await list(`?dataview=${fx.dataview}&instance=${fx.sub.s1}`))).toEqual([]);
  });

  it('uses the exact §2.3 URL formats in both listing kinds', async () => {
    const [p1] = (await list(`?instance=${fx.sub.s1}&type=image`)) as Item[];
    expect(p1).toEqual({
      id: p1.id, url: `${BASE}/api/v1/media/${p1.id}`, filename: `${fx.owner.username}/attachments/${fx.formA}_media_a/p1.jpg`, mimetype: 'image/jpeg',
      xform: fx.formA, instance: fx.sub.s1,
      download_url: `${BASE}/api/v1/media/${p1.id}.jpg`, small_download_url: `${BASE}/api/v1/media/${p1.id}-small.jpg`, medium_download_url: `${BASE}/api/v1/media/${p1.id}-medium.jpg`,
      field_xpath: 'visit/photo',
    });
    const plain = (await list(`?instance=${fx.sub.s1}`)).find((i) => i.id === p1.id)!;
    expect(plain).not.toHaveProperty('field_xpath');
    expect(plain.download_url).toBe(`${BASE}/api/v1/media/${p1.id}.jpg`);

    const file = encodeURIComponent(p1.filename);
    for (const query of [`?merged_xform=${fx.merged}`, `?dataview=${fx.dataview}`]) {
      const items = await list(query);
      for (const it of items) {
        const f = encodeURIComponent(it.filename);
        expect(it.download_url).toBe(`${BASE}/api/v1/files/${it.id}?filename=${f}`);
        expect(it.small_download_url).toBe(`${BASE}/api/v1/files/${it.id}?filename=${f}&suffix=small`);
        expect(it.medium_download_url).toBe(`${BASE}/api/v1/files/${it.id}?filename=${f}&suffix=medium`);
        expect(it).toHaveProperty('field_xpath');
      }
    }
    const viaMerged = (await list(`?merged_xform=${fx.merged}&type=image`)).find((i) => i.id === p1.id)!;
    expect(viaMerged).toMatchObject({ download_url: `${BASE}/api/v1/files/${p1.id}?filename=${file}`, field_xpath: 'visit/photo' });
    // The §2.2 `_attachments` of the data endpoint use the same builder (files style).
    const data = (await get(`/api/v1/data/${fx.formA}/${fx.sub.s1}`).expect(200)).body;
    expect(data._attachments.find((a: { id: number }) => a.id === p1.id)).toMatchObject({ download_url: viaMerged.download_url, small_download_url: viaMerged.small_download_url });
  });

  it('pages: page_size, last page, page past the end (404), Link and X-Total-Count, page_size above the maximum clamped', async () => {
    const all = await list(`?xform=${fx.formA}`);
    const p1 = await get(`/api/v1/media?xform=${fx.formA}&page_size=4`).expect(200);
    expect(p1.body.map((i: Item) => i.id)).toEqual(all.slice(0, 4).map((i) => i.id));
    expect(p1.headers['x-total-count']).toBe('6');
    expect(p1.headers.link).toBe(`<${BASE}/api/v1/media?xform=${fx.formA}&page_size=4&page=2>; rel="next"`);
    const p2 = await get(`/api/v1/media?xform=${fx.formA}&page_size=4&page=2`).expect(200);
    expect(p2.body.map((i: Item) => i.id)).toEqual(all.slice(4).map((i) => i.id));
    expect(p2.headers.link).toBe(`<${BASE}/api/v1/media?xform=${fx.formA}&page_size=4&page=1>; rel="prev"`);
    const past = await get(`/api/v1/media?xform=${fx.formA}&page_size=4&page=3`).expect(404);
    expect(past.body).toEqual({ detail: 'Invalid page.' });
    const big = await get(`/api/v1/media?xform=${fx.formA}&page_size=20000`).expect(200);
    expect(big.body).toHaveLength(6);
    // Clamped to 10000: page 2 of 10000-item pages does not exist.
    await get(`/api/v1/media?xform=${fx.formA}&page_size=20000&page=2`).expect(404);
    // An empty first page is a page, not an error.
    expect((await get(`/api/v1/media?xform=${fx.formB}&type=video`).expect(200)).body).toEqual([]);
  });

  it('answers 400 with the decided messages for invalid ids, types and pages', async () => {
    const bad = async (query: string) => (await get(`/api/v1/media${query}`).expect(400)).body;
    for (const v of ['abc', '0', '-1', '1.5', '99999999999', '']) {
      expect(await bad(`?xform=${encodeURIComponent(v)}`)).toEqual({ detail: 'Invalid value for formid. It must be a positive integer.' });
      expect(await bad(`?instance=${encodeURIComponent(v)}`)).toEqual({ detail: 'Invalid value for instance. It must be a positive integer.' });
    }
    expect(await bad('?xform=1&xform=2')).toEqual({ detail: 'Invalid value for formid. It must be a positive integer.' });
    expect(await bad('?merged_xform=x')).toEqual({ detail: 'Invalid value for merged_xform. It must be a positive integer.' });
    expect(await bad('?dataview=x')).toEqual({ detail: 'Invalid value for dataview. It must be a positive integer.' });
    expect(await bad('?type=spreadsheet')).toEqual({ detail: 'Invalid value for type. It must be one of image, audio, video, document, file.' });
    expect(await bad('?page=0')).toEqual({ page: ['A positive integer.'] });
    expect(await bad('?page_size=x')).toEqual({ page_size: ['A positive integer.'] });
    expect((await get('/api/v1/media/count?xform=abc').expect(400)).body).toEqual({ detail: 'Invalid value for formid. It must be a positive integer.' });
  });

  it('answers 404 for filters naming something the caller cannot see: deleted form, deleted instance, unknown ids', async () => {
    for (const q of [`?xform=${fx.formC}`, `?instance=${fx.sub.s3}`, `?instance=${fx.sub.s5}`, '?xform=999999', '?merged_xform=999999', '?dataview=999999']) {
      expect((await get(`/api/v1/media${q}`).expect(404)).body).toEqual({ detail: 'Not found.' });
      await get(`/api/v1/media/count${q}`).expect(404);
    }
  });

  it('keeps counts right through deletes (trigger-maintained counters)', async () => {
    const before = (await get(`/api/v1/media/count?xform=${fx.formB}`).expect(200)).body.count;
    await request(sut.url).delete(`/api/v1/data/${fx.formB}/${fx.sub.s4}`).set('Authorization', fx.owner.token).expect(204);
    expect((await get(`/api/v1/media/count?xform=${fx.formB}`).expect(200)).body).toEqual({ count: before - 2 });
    expect((await get(`/api/v1/media/count?xform=${fx.formB}&type=image`).expect(200)).body).toEqual({ count: 0 });
    expect(await list(`?xform=${fx.formB}`)).toEqual([]);
  });
});
