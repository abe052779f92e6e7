import ExcelJS from 'exceljs';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { binary } from './data-fixtures.js';
import { registrationXForm } from './entity-forms.js';
import { until } from './restservices-receiver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * An entity list through the asynchronous export (docs/exports.md, "Asynchronous exports";
 * docs/entities.md, "Exports of a list"): `POST /api/v1/export {"entity_list", "format"}` is
 * checked as the list's own downloads are, written by the worker's `export` job, and its file
 * is the list's synchronous CSV or XLSX. Real PostgreSQL, Redis and the worker's job handler.
 */
describe('asynchronous export of an entity list', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let listId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp({}, { worker: true });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(registrationXForm('export_trees', 'export_trees')), 'form.xml').expect(201)).body.formid;
    const [row] = (await sut.app.get(DataSource).query(`SELECT id FROM entity_lists WHERE owner_id = $1 AND name = 'export_trees'`, [owner.id])) as Array<{ id: number }>;
    listId = row!.id;
    const entities = [
      { label: 'Oak', data: { species: 'Oak', circumference_cm: '40' } },
      { label: '=HYPERLINK("http://x")', data: { species: '+cmd', circumference_cm: '-5' } },
      { label: 'Ash', data: { species: 'Ash' } },
    ];
    await request(sut.url).post(`/api/v2/entity-lists/${listId}/entities`).set('Authorization', owner.token).send({ entities }).expect(201);
  });
  afterAll(async () => {
    await sut?.close();
  });

  const get = (path: string, user: TestUser = owner) => request(sut.url).get(path).set('Authorization', user.token).buffer(true).parse(binary);
  const ask = (body: Record<string, unknown>, user: TestUser = owner) => request(sut.url).post('/api/v1/export').set('Authorization', user.token).send(body);
  /** The export's file once the worker wrote it. */
  const finished = async (id: string, user: TestUser = owner) => {
    const state = async () => (await request(sut.url).get(`/api/v1/export/${id}`).set('Authorization', user.token).expect(200)).body as { status: string; download_url: string | null; progress: number };
    await until('the export', async () => (await state()).status !== 'pending' && (await state()).status !== 'running', 60_000);
    const done = await state();
    expect(done).toMatchObject({ status: 'done', progress: 1 });
    return (await get(new URL(done.download_url!).pathname, user).expect(200)).body as Buffer;
  };
  const sheetRows = async (bytes: Buffer) => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(bytes as unknown as ArrayBuffer);
    const rows: unknown[][] = [];
    wb.getWorksheet('entities')!.eachRow((r) => void rows.push((r.values as unknown[]).slice(1)));
    return rows;
  };

  it('CSV and XLSX: the worker writes the list\'s own files, the formula guard as asked', async () => {
    const csv = (await ask({ entity_list: listId, format: 'csv' }).expect(202)).body as { id: string; status: string };
    expect(csv.status).toBe('pending');
    const stored = await finished(csv.id);
    const direct = (await get(`/api/v2/entity-lists/${listId}.csv`).expect(200)).body as Buffer;
    expect(stored.equals(direct)).toBe(true);
    expect(stored.toString()).toContain(`"'=HYPERLINK(""http://x"")"`);

    const raw = await finished(((await ask({ entity_list: listId, format: 'csv', escape_formulas: false }).expect(202)).body as { id: string }).id);
    expect(raw.equals((await get(`/api/v2/entity-lists/${listId}.csv?escape_formulas=false`).expect(200)).body as Buffer)).toBe(true);

    const xlsx = await finished(((await ask({ entity_list: listId, format: 'xlsx' }).expect(202)).body as { id: string }).id);
    const rows = await sheetRows(xlsx);
    expect(rows).toEqual(await sheetRows((await get(`/api/v2/entity-lists/${listId}.xlsx`).expect(200)).body as Buffer));
    expect(rows).toHaveLength(4);
    expect(rows[0]!.slice(0, 3)).toEqual(['name', 'label', '__version']);
  }, 90_000);

  it('refuses what is not one list in csv or xlsx, and checks the list as its downloads do', async () => {
    expect((await ask({ entity_list: listId, format: 'zip' }).expect(400)).body).toEqual({ format: ['An entity list exports as csv or xlsx.'] });
    expect((await ask({ entity_list: listId, xform: formId, format: 'csv' }).expect(400)).body).toEqual({ entity_list: ['Either xform or entity_list, not both.'] });
    expect((await ask({ format: 'csv' }).expect(400)).body).toEqual({ xform: ['A form id.'] });
    expect(Object.keys((await ask({ entity_list: 'x', format: 'csv' }).expect(400)).body)).toEqual(['entity_list']);

    const stranger = await createTestUser(sut.app);
    await ask({ entity_list: listId, format: 'csv' }, stranger).expect(404);
    await ask({ entity_list: 999_999, format: 'csv' }).expect(404);
    // A reader of the form that uses the list may export it while the share lasts.
    const reader = await createTestUser(sut.app);
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    const job = (await ask({ entity_list: listId, format: 'csv' }, reader).expect(202)).body as { id: string };
    const file = await finished(job.id, reader);
    expect(file.equals((await get(`/api/v2/entity-lists/${listId}.csv`, reader).expect(200)).body as Buffer)).toBe(true);
    await request(sut.url).get(`/api/v1/export/${job.id}`).set('Authorization', stranger.token).expect(404);
    // Taking the share away takes the export with it, status and file.
    const path = new URL(((await request(sut.url).get(`/api/v1/export/${job.id}`).set('Authorization', reader.token).expect(200)).body as { download_url: string }).download_url).pathname;
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly', remove: true }).expect(204);
    await request(sut.url).get(`/api/v1/export/${job.id}`).set('Authorization', reader.token).expect(404);
    await request(sut.url).get(path).set('Authorization', reader.token).expect(404);
  }, 90_000);
});
