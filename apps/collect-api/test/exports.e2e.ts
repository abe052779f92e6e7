import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import request from 'supertest';
import { freePort, startServiceProcess } from '@collect/testing';
import { binary, DATA_FORM, seedSubmissions, TAGS, type Answers, type SeededSubmission } from './data-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

const WORKER = fileURLToPath(new URL('../dist/worker.js', import.meta.url));
const N = 10_000;
const T = 300_000;

/** The expected CSV cells of one submission, flattened here independently of the exporter. */
function flatten(rec: Answers, basePath = '', baseHeader = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [key, value] of Object.entries(rec)) {
    const rel = basePath ? key.slice(basePath.length) : key;
    if (Array.isArray(value)) value.forEach((item, i) => flatten(item, key, `${baseHeader}${rel}[${i + 1}]`, out));
    else out[`${baseHeader}${rel}`] = value;
  }
  return out;
}

describe('exports: CSV and XLSX of 10,000 submissions with repeats parse back to the same values', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let rows: SeededSubmission[];

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app, { username: 'exporter' });
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(DATA_FORM).expect(201)).body.formid;
    rows = await seedSubmissions(sut.app, formId, [{ id: owner.id, username: 'exporter' }], N, 99);
  }, T);
  afterAll(() => sut.close());

  const get = (path: string) => request(sut.url).get(path).set('Authorization', owner.token).buffer(true).parse(binary);

  it('CSV: every cell equals the stored answer; repeats as rep[i]/q; metadata after the fields', async () => {
    const res = await get(`/api/v1/data/${formId}.csv`).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="data_out.csv"');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const [header, ...body] = parse(res.body as Buffer, { relaxColumnCount: false }) as string[][];
    expect(header.slice(0, 5)).toEqual(['name', 'age', 'score', 'district', 'tags']);
    expect(header.slice(-5)).toEqual(['_id', '_uuid', '_submission_time', '_version', '_submitted_by']);
    // Form order: kids[1]'s questions (and its toys) before kids[2]'s, `note` after the repeat.
    expect(header.indexOf('kids[1]/kid_name')).toBeLessThan(header.indexOf('kids[1]/toys[1]/toy'));
    expect(header.indexOf('kids[1]/toys[2]/toy')).toBeLessThan(header.indexOf('kids[2]/kid_name'));
    expect(header.indexOf('kids[3]/kid_age')).toBeLessThan(header.indexOf('note'));
    expect(header).not.toContain('kids[4]/kid_name');
    expect(body).toHaveLength(N);
    body.forEach((cells, i) => {
      const s = rows[i];
      const expected = { ...flatten(s.json), _id: String(s.id), _uuid: s.uuid, _submission_time: s.time, _submitted_by: 'exporter' };
      const got = Object.fromEntries(header.map((h, c) => [h, cells[c]]).filter(([, v]) => v !== ''));
      expect(got).toEqual(expected);
    });
  }, T);

  it('XLSX: the submissions sheet and one sheet per repeat, linked by _index/_parent_index, read back equal', async () => {
    const res = await get(`/api/v1/data/${formId}.xlsx`).expect(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(res.body as Buffer);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['data', 'kids', 'toys']);
    const table = (name: string) => {
      const sheet = wb.getWorksheet(name)!;
      const values: Array<Record<string, unknown>> = [];
      let head: string[] = [];
      sheet.eachRow((row, n) => {
        const cells = (row.values as unknown[]).slice(1);
        if (n === 1) head = cells as string[];
        else values.push(Object.fromEntries(head.map((h, c) => [h, cells[c]]).filter(([, v]) => v !== undefined && v !== null && v !== '')));
      });
      return { head, values };
    };
    const data = table('data');
    const kids = table('kids');
    const toys = table('toys');
    expect(data.head).toEqual(['name', 'age', 'score', 'district', 'tags', 'place/village', 'note', '_id', '_uuid', '_submission_time', '_version', '_submitted_by', '_index']);
    expect(kids.head).toEqual(['kids/kid_name', 'kids/kid_age', '_index', '_parent_index', '_parent_table_name', '_submission__id']);
    expect(toys.head).toEqual(['kids/toys/toy', '_index', '_parent_index', '_parent_table_name', '_submission__id']);
    const want = { data: [] as Array<Record<string, unknown>>, kids: [] as Array<Record<string, unknown>>, toys: [] as Array<Record<string, unknown>> };
    rows.forEach((s, i) => {
      const top = Object.fromEntries(Object.entries(s.json).filter(([, v]) => typeof v === 'string'));
      want.data.push({ ...top, _id: s.id, _uuid: s.uuid, _submission_time: s.time, _submitted_by: 'exporter', _index: i + 1 });
      for (const kid of (s.json.kids as Answers[] | undefined) ?? []) {
        const kidIndex = want.kids.length + 1;
        want.kids.push({ 'kids/kid_name': kid['kids/kid_name'], 'kids/kid_age': kid['kids/kid_age'], _index: kidIndex, _parent_index: i + 1, _parent_table_name: 'data', _submission__id: s.id });
        for (const toy of (kid['kids/toys'] as Answers[] | undefined) ?? []) {
          want.toys.push({ 'kids/toys/toy': toy['kids/toys/toy'], _index: want.toys.length + 1, _parent_index: kidIndex, _parent_table_name: 'kids', _submission__id: s.id });
        }
      }
    });
    expect(data.values).toEqual(want.data);
    expect(kids.values).toEqual(want.kids);
    expect(toys.values).toEqual(want.toys);
  }, T);

  it('options: split_select_multiples, include_labels, group_delimiter, remove_group_name', async () => {
    const res = await get(`/api/v1/data/${formId}.csv?split_select_multiples=true&include_labels=true&group_delimiter=.&remove_group_name=true`).expect(200);
    const [header, labels, ...body] = parse(res.body as Buffer) as string[][];
    const tagColumns = TAGS.slice().sort().map((t) => `tags.${t}`);
    expect(header).toEqual(expect.arrayContaining([...tagColumns, 'village', 'kids[1].kid_name', 'kids[1].toys[1].toy']));
    expect(header).not.toContain('tags');
    expect(header).not.toContain('place.village');
    expect(labels[header.indexOf('village')]).toBe('Village');
    expect(labels[header.indexOf('name')]).toBe('Name');
    body.forEach((cells, i) => {
      const answer = rows[i].json.tags as string | undefined;
      for (const t of TAGS) expect(cells[header.indexOf(`tags.${t}`)]).toBe(answer === undefined ? '' : answer.split(' ').includes(t) ? '1' : '0');
    });
    await get(`/api/v1/data/${formId}.csv?group_delimiter=-`).expect(400);
  }, T);

  it('merged datasets and dataviews export the same way; a dataview keeps its filter and columns', async () => {
    const second = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ ...DATA_FORM, id_string: 'data_out_2' }).expect(201)).body.formid;
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'data_out_2', submission: { name: 'second form', age: '7' } }).expect(201);
    const merged = (await request(sut.url).post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'm', xforms: [formId, second] }).expect(201)).body.id;
    const mergedCsv = parse((await get(`/api/v1/merged-datasets/${merged}/data.csv`).expect(200)).body as Buffer) as string[][];
    expect(mergedCsv).toHaveLength(N + 2);
    expect(mergedCsv[N + 1][0]).toBe('second form');
    const view = (await request(sut.url).post('/api/v1/dataviews').set('Authorization', owner.token).send({ name: 'v', xform: formId, columns: ['name', 'age'], query: [{ column: 'age', filter: '>', value: '90' }] }).expect(201)).body.id;
    const viewCsv = parse((await get(`/api/v1/dataviews/${view}/data.csv`).expect(200)).body as Buffer) as string[][];
    expect(viewCsv[0]).toEqual(['name', 'age', '_id', '_uuid', '_submission_time', '_version', '_submitted_by']);
    // Dataview semantics (datasets/dataview-query.ts): numeric when the answer is a number, byte-ordered text otherwise.
    const expected = rows.filter((r) => typeof r.json.age === 'string' && (/^\d+$/.test(r.json.age) ? Number(r.json.age) > 90 : r.json.age > '90'));
    expect(viewCsv.slice(1).map((c) => Number(c[2]))).toEqual(expected.map((r) => r.id));
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await get(`/api/v1/dataviews/${view}/data.xlsx`).expect(200)).body as Buffer);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['data']);
  }, T);

  it('columns come from every version of the form: a question only an older definition had keeps its column, after its group', async () => {
    const v1 = { id_string: 'versioned_out', title: 'Versions', fields: [
      { name: 'name', type: 'text', label: 'Name' },
      { name: 'place', type: 'group', label: 'Place', children: [{ name: 'village', type: 'text', label: 'Village' }, { name: 'street', type: 'text', label: 'Street' }] },
      { name: 'note', type: 'text', label: 'Note' },
    ] };
    const id = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(v1).expect(201)).body.formid as number;
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'versioned_out', submission: { name: 'old', 'place/street': 'Elm', note: 'n1' } }).expect(201);
    // Version 2 drops place/street and adds `extra`.
    const v2 = { ...v1, fields: [v1.fields[0], { ...v1.fields[1], children: [v1.fields[1].children![0]] }, { name: 'extra', type: 'text', label: 'Extra' }, v1.fields[2]] };
    await request(sut.url).patch(`/api/v1/forms/${id}`).set('Authorization', owner.token).send(v2).expect(200);
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'versioned_out', submission: { name: 'new', 'place/village': 'V', extra: 'e' } }).expect(201);
    const [header, ...body] = parse((await get(`/api/v1/data/${id}.csv`).expect(200)).body as Buffer) as string[][];
    expect(header.slice(0, 5)).toEqual(['name', 'place/village', 'place/street', 'extra', 'note']);
    const cells = body.map((row) => Object.fromEntries(header.slice(0, 5).map((h, c) => [h, row[c]])));
    expect(cells).toEqual([
      { name: 'old', 'place/village': '', 'place/street': 'Elm', extra: '', note: 'n1' },
      { name: 'new', 'place/village': 'V', 'place/street': '', extra: 'e', note: '' },
    ]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await get(`/api/v1/data/${id}.xlsx`).expect(200)).body as Buffer);
    expect((wb.getWorksheet('data')!.getRow(1).values as unknown[]).slice(1, 6)).toEqual(['name', 'place/village', 'place/street', 'extra', 'note']);
  }, T);

  it('asynchronous export: 202, written by the worker process (not the API), progress to done, download equals the synchronous CSV; only the requester sees it', async () => {
    const created = await request(sut.url).post('/api/v1/export').set('Authorization', owner.token).send({ xform: formId, format: 'csv' }).expect(202);
    expect(created.body).toEqual(expect.objectContaining({ id: expect.any(String), status: 'pending', progress: 0 }));
    const read = async () => (await request(sut.url).get(`/api/v1/export/${created.body.id as string}`).set('Authorization', owner.token).expect(200)).body as { status: string; progress: number; download_url: string | null; expires_at: string };
    // The API process only queues the `export` job: with no worker running, nothing writes it.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await read()).toEqual(expect.objectContaining({ status: 'pending', progress: 0, download_url: null }));
    const port = await freePort();
    const worker = await startServiceProcess(WORKER, {
      NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: sut.config.DATABASE_URL, REDIS_URL: sut.config.REDIS_URL, REDIS_PREFIX: sut.config.REDIS_PREFIX,
      MEDIA_ROOT: sut.config.MEDIA_ROOT, WORKER_PORT: String(port), COLLECT_PORT: String(port),
    }, port);
    let state = await read();
    try {
      for (let i = 0; i < 1200 && state.status !== 'done' && state.status !== 'failed'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = await read();
        expect(state.progress).toBeGreaterThanOrEqual(0);
        expect(state.progress).toBeLessThanOrEqual(1);
      }
    } finally {
      await worker.stop();
    }
    expect(state).toEqual(expect.objectContaining({ status: 'done', progress: 1, error: null }));
    expect(Date.parse(state.expires_at)).toBeGreaterThan(Date.now());
    const path = new URL(state.download_url!).pathname;
    const stored = await get(path).expect(200);
    const direct = await get(`/api/v1/data/${formId}.csv`).expect(200);
    expect((stored.body as Buffer).equals(direct.body as Buffer)).toBe(true);
    const stranger = await createTestUser(sut.app);
    await request(sut.url).get(`/api/v1/export/${created.body.id as string}`).set('Authorization', stranger.token).expect(404);
    await request(sut.url).get(path).set('Authorization', stranger.token).expect(404);
    await request(sut.url).post('/api/v1/export').set('Authorization', stranger.token).send({ xform: formId, format: 'xlsx' }).expect(404);
    const badFormat = await request(sut.url).post('/api/v1/export').set('Authorization', owner.token).send({ xform: formId, format: 'pdf' }).expect(400);
    expect(Object.keys(badFormat.body)).toEqual(['format']);
  }, T);
});
