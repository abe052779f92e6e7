import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { FILE_STORAGE, type FileStorage } from '../src/storage/file-storage.js';
import { demoXForm } from './forms-fixtures.js';
import { mediaFormDefinition, submitMedia } from './media-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { busyConnections, eventually, slowReader, watcher } from './slow-readers.js';

/**
 * A client that stops reading, on every streamed route (docs/security.md, "Streamed reads and
 * heavy queries"): three such clients per route, then the API keeps answering others (a
 * submission, readiness, another user's page), the database connections they hold stay within
 * READ_POOL_SIZE, and none is left held once the stall deadline has passed.
 */
describe('every streamed route: clients that stop reading leave the API to the others', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let other: TestUser;
  let db: pg.Client;
  const ids: Record<string, number | string> = {};
  const POOL = 3;

  beforeAll(async () => {
    sut = await startTestCollectApp({ DATABASE_POOL_SIZE: '4', READ_POOL_SIZE: String(POOL), READS_PER_USER: '2', READ_SLOT_WAIT_MS: '0', STREAM_STALL_TIMEOUT_MS: '2000' });
    owner = await createTestUser(sut.app);
    other = await createTestUser(sut.app);
    const api = () => request(sut.url);
    const text = `axes_${process.pid}`;
    ids.form = (await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: text, fields: [{ name: 'n', type: 'text' }, { name: 'pad', type: 'text' }] }).expect(201)).body.formid;
    // 10,000 rows of about 2 KB of hex (it compresses to about half: the XLSX stays large too).
    await sut.app.get(DataSource).query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id)
       SELECT $1, 'a' || i, jsonb_build_object('n', i::text, 'pad', (SELECT string_agg(md5(i::text || '-' || j), '') FROM generate_series(1, 60) j)), '<data/>', md5(i::text) || md5(i::text), $2
       FROM generate_series(1, 10000) AS i`,
      [ids.form, owner.id],
    );
    ids.media = (await api().post('/api/v1/forms').set('Authorization', owner.token).send(mediaFormDefinition('axes_media')).expect(201)).body.formid;
    const big = randomBytes(12 * 1024 * 1024);
    await submitMedia(sut, owner, ids.media as number, 'axes_media', { instanceId: randomUUID(), age: '30', walk: { name: 'walk.avi', data: big, type: 'video/x-msvideo' } });
    const [item] = (await api().get(`/api/v1/media?xform=${ids.media}`).set('Authorization', owner.token).expect(200)).body as Array<{ id: number }>;
    ids.attachment = item!.id;
    ids.merged = (await api().post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'axes', xforms: [ids.form, ids.media] }).expect(201)).body.id;
    ids.dataview = (await api().post('/api/v1/dataviews').set('Authorization', owner.token).send({ name: 'axes', xform: ids.form, columns: ['n', 'pad'], query: [{ column: 'n', filter: '!=', value: 'none' }] }).expect(201)).body.id;
    // A finished asynchronous export, as the worker leaves it: a stored file and its row.
    const exportId = randomUUID();
    await sut.app.get<FileStorage>(FILE_STORAGE).putStream(`exports/${exportId}.csv`, Readable.from([big]), 'application/octet-stream');
    await sut.app.get(DataSource).query(
      `INSERT INTO export_jobs (id, owner_id, form_id, format, options, status, progress, path, size, expires_at) VALUES ($1, $2, $3, 'csv', '{}', 'done', 1, $4, $5, now() + interval '1 hour')`,
      [exportId, owner.id, ids.form, `exports/${exportId}.csv`, big.length],
    );
    ids.export = exportId;
    // An entity list of 10,000 entities of about 2 KB each, and a form that loads it (its list attachment).
    ids.list = (await api().post('/api/v2/entity-lists').set('Authorization', owner.token).send({ name: 'axes_list' }).expect(201)).body.id;
    await sut.app.get(DataSource).query(`UPDATE entity_lists SET properties = '{pad}' WHERE id = $1`, [ids.list]);
    await sut.app.get(DataSource).query(
      `INSERT INTO entities (list_id, uuid, label, data) SELECT $1, gen_random_uuid(), 'e' || i,
         jsonb_build_object('pad', (SELECT string_agg(md5(i::text || '-' || j), '') FROM generate_series(1, 60) j)) FROM generate_series(1, 10000) AS i`,
      [ids.list],
    );
    const lookup = demoXForm('axes_lookup').replace('</instance>', '</instance><instance id="l" src="jr://file-csv/axes_list.csv"/>');
    ids.lookup = (await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(lookup).expect(201)).body.formid;
    db = await watcher(sut.config.DATABASE_URL);
  }, 300_000);
  afterAll(async () => {
    await db?.end();
    await sut?.close();
  });

  const ROUTES: Array<[name: string, path: () => string]> = [
    ['CSV download', () => `/api/v1/data/${ids.form}.csv`],
    ['XLSX download', () => `/api/v1/data/${ids.form}.xlsx`],
    ['JSON page of 10,000', () => `/api/v1/data/${ids.form}?page_size=10000`],
    ['JSON page with a sort', () => `/api/v1/data/${ids.form}?limit=10000&sort=${encodeURIComponent('{"n":1}')}`],
    ['merged dataset page', () => `/api/v1/merged-datasets/${ids.merged}/data?page_size=10000`],
    ['merged dataset CSV', () => `/api/v1/merged-datasets/${ids.merged}/data.csv`],
    ['dataview CSV', () => `/api/v1/dataviews/${ids.dataview}/data.csv`],
    ['media archive', () => `/api/v1/media.zip?xform=${ids.media}`],
    ['export file download', () => `/api/v1/export/${ids.export}/download`],
    ['media file download', () => `/api/v1/media/${ids.attachment}.avi`],
    ['entity list attachment', () => `/xformsMedia/${ids.lookup}/entity-list/axes_list.csv`],
    ['entity list XLSX', () => `/api/v2/entity-lists/${ids.list}.xlsx`],
  ];

  it.each(ROUTES)('%s: three readers that stop reading; others are answered; connections bounded, then given back', async (_name, path) => {
    const readers = [0, 1, 2].map(() => slowReader(sut.url, path(), owner.token));
    const statuses = await Promise.all(readers.map((r) => r.status));
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);

    const submitted = await request(sut.url).post('/api/v1/submissions').set('Authorization', other.token).timeout(20_000)
      .send({ id: `axes_${process.pid}`, submission: { n: 'during' } });
    // The other user holds no role on the form: 403/404 is an answer too; what matters is that one comes.
    expect([201, 403, 404]).toContain(submitted.status);
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).timeout(20_000).send({ id: `axes_${process.pid}`, submission: { n: 'during' } }).expect(201);
    expect((await request(sut.url).get('/health/ready').timeout(20_000)).status).toBe(200);
    expect((await request(sut.url).get(`/api/v1/data/${ids.form}?page_size=5`).set('Authorization', owner.token).timeout(20_000)).status).toBe(200);
    const held = await busyConnections(db);
    expect(held.total).toBeLessThanOrEqual(POOL);

    const after = await eventually(() => busyConnections(db), (c) => c.total === 0, 30_000);
    expect(after.total).toBe(0);
    for (const r of readers) r.socket.destroy();
    await Promise.all(readers.map((r) => r.closed));
  }, 120_000);
});
