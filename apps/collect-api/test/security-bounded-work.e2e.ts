import { Readable } from 'node:stream';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { FILE_STORAGE, type FileStorage } from '../src/storage/file-storage.js';
import { corruptJpeg, mediaFormDefinition, submitMedia } from './media-fixtures.js';
import { jpeg } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Unbounded work (docs/security.md, "Bounded work for anonymous and unauthorised callers"). A merged dataset is paged in SQL (every row reachable,
 * none loaded beyond the page), the number of its forms is capped, and a failed image decode is
 * remembered instead of retried on every request. (OpenRosa attachments are not spooled before
 * the role check: security-input.e2e.ts.)
 */
describe('security: bounded work', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  const api = () => request(sut.url);
  const form = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: idString, fields: [{ name: 'n', type: 'integer' }] }).expect(201)).body.formid as number;

  beforeAll(async () => {
    sut = await startTestCollectApp({ MERGED_DATASET_MAX_FORMS: '3' });
    owner = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  it('merged dataset data: 10,001 rows in one form and 1 in the other are all reachable, page by page, in order', async () => {
    const big = await form('big_form');
    const small = await form('small_form');
    // 10,001 rows written as intake writes them (10,001 HTTP submissions would take minutes).
    await sut.app.get(DataSource).query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id)
       SELECT $1, 'u' || i, jsonb_build_object('n', i::text), '<data/>', md5(i::text) || md5(i::text), $2 FROM generate_series(1, 10001) AS i`,
      [big, owner.id],
    );
    await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'small_form', submission: { n: '-1' } }).expect(201);
    const merged = (await api().post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'both', xforms: [big, small] }).expect(201)).body.id as number;

    const page = (n: number) => api().get(`/api/v1/merged-datasets/${merged}/data?page=${n}&page_size=1000`).set('Authorization', owner.token).expect(200);
    const first = await page(1);
    expect(first.headers['x-total-count']).toBe('10002');
    expect(first.body).toHaveLength(1000);
    expect(first.body[0]).toMatchObject({ n: '1', _xform_id: big });
    const last = await page(11);
    expect(last.body.map((r: { n: string; _xform_id: number }) => [r.n, r._xform_id])).toEqual([['10001', big], ['-1', small]]);
    expect(last.headers.link).toContain('rel="prev"');
    await api().get(`/api/v1/merged-datasets/${merged}/data?page=12&page_size=1000`).set('Authorization', owner.token).expect(404);
  });

  it('a merged dataset of more than MERGED_DATASET_MAX_FORMS forms: 400 naming the variable', async () => {
    const ids = await Promise.all(['m1', 'm2', 'm3', 'm4'].map(form));
    const res = await api().post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'too many', xforms: ids }).expect(400);
    expect(res.body).toEqual({ xforms: ['At most 3 forms (MERGED_DATASET_MAX_FORMS).'] });
    await api().post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'enough', xforms: ids.slice(0, 3) }).expect(201);
  });

  it('an image that failed to decode answers the same 422 afterwards without being decoded again', async () => {
    const formId = (await api().post('/api/v1/forms').set('Authorization', owner.token).send(mediaFormDefinition('broken_media')).expect(201)).body.formid as number;
    const submissionId = await submitMedia(sut, owner, formId, 'broken_media', { instanceId: 'b0000000-0000-4000-8000-000000000001', age: '20', photo: { name: 'broken.jpg', data: corruptJpeg(), type: 'image/jpeg' } });
    const [item] = (await api().get(`/api/v1/media?instance=${submissionId}`).set('Authorization', owner.token).expect(200)).body as Array<{ id: number; filename: string }>;
    const first = await api().get(`/api/v1/media/${item.id}-small.jpg`).set('Authorization', owner.token).expect(422);
    const [row] = await sut.app.get(DataSource).query(`SELECT variant_error FROM attachments WHERE id = $1`, [item.id]);
    expect(row.variant_error).toEqual(expect.any(String));
    // Were the file decoded again, a good image in its place would now give a thumbnail.
    await sut.app.get<FileStorage>(FILE_STORAGE).putStream(item.filename, Readable.from([await jpeg()]), 'image/jpeg');
    const again = await api().get(`/api/v1/media/${item.id}-small.jpg`).set('Authorization', owner.token).expect(422);
    expect(again.body).toEqual(first.body);
    await api().get(`/api/v1/media/${item.id}-medium.jpg`).set('Authorization', owner.token).expect(422);
    // The original is still served.
    await api().get(`/api/v1/media/${item.id}.jpg`).set('Authorization', owner.token).expect(200);
  });
});
