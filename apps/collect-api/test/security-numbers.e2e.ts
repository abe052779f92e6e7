import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { binary, NAME_AGE_SCORE } from './data-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Out-of-range numbers through every numeric cast (docs/security.md, "Numbers, formulas and
 * names"). Stored answers that PostgreSQL's `numeric` cannot hold (`1e999999`, 200,000 digits,
 * an exponent past int32) once made every numeric read of the form a 500 for every reader:
 * order operators and sorts of the data API, dataview filters (their list, their data, their
 * exports, the media they select). Each route below is called over a form that holds such
 * answers beside ordinary ones; each must answer 200 and treat them as missing numbers.
 */

const FORM = { id_string: 'numbers', title: 'Numbers', fields: NAME_AGE_SCORE };

/** Text `numeric` refuses or that is no number: each must read as a missing number. */
export const OUT_OF_RANGE = [
  '1e999999', '-1e999999', '1e-999999', '1e131073', '1e2147483648', '1e99999999999999999999',
  '9'.repeat(200), `0.${'9'.repeat(20_000)}`, '9'.repeat(131_073), 'NaN', 'Infinity', '-Infinity', '1e', '--1', '0x10',
];
/** Ordinary numbers (as stored): they compare and sort as numbers. */
const GOOD = ['-5', '0', '7', '42', ' 12 ', '+3', '1000000'];

describe('security: out-of-range numbers through every numeric cast', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let formId: number;
  /** Submission ids with an ordinary age, by value; the out-of-range ones. */
  const good = new Map<number, number>();
  const bad: number[] = [];
  /** Every row's stored age text, by id. */
  const stored = new Map<number, string>();

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(FORM).expect(201)).body.formid;
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    // Stored as an OpenRosa intake stores what a phone sent (no type check there), straight into the table.
    const db = sut.app.get(DataSource);
    const rows = [...GOOD.map((v) => ({ v, ok: true })), ...OUT_OF_RANGE.map((v) => ({ v, ok: false }))];
    for (const [i, r] of rows.entries()) {
      const [{ id }] = (await db.query(
        `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version) VALUES ($1, $2, $3, '', '', $4, '') RETURNING id`,
        [formId, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, JSON.stringify({ name: `n${i}`, age: r.v, score: r.v }), owner.id],
      )) as Array<{ id: number }>;
      stored.set(id, r.v);
      if (r.ok) good.set(id, Number(r.v));
      else bad.push(id);
    }
  }, 120_000);
  afterAll(() => sut.close());

  const get = (path: string, user = reader) => request(sut.url).get(path).set('Authorization', user.token);
  const ids = (body: Array<{ _id: number }>) => body.map((r) => r._id);
  /** Ids of the ordinary rows whose value passes `test`, in id order. */
  const where = (test: (n: number) => boolean) => [...good].filter(([, n]) => test(n)).map(([id]) => id).sort((a, b) => a - b);
  const ascending = () => [...good].sort((a, b) => a[1] - b[1] || a[0] - b[0]).map(([id]) => id);

  const OPS: Array<[string, (n: number) => boolean]> = [['$gt', (n) => n > 0], ['$gte', (n) => n >= 0], ['$lt', (n) => n < 0], ['$lte', (n) => n <= 0]];
  const queryCases = ['age', 'score'].flatMap((field) => OPS.map(([op, test]) => ({ label: `query ${field} ${op} 0`, field, op, test })));

  it.each(queryCases)('data API $label: 200, out-of-range answers never match', async ({ field, op, test }) => {
    const res = await get(`/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ [field]: { [op]: 0 } }))}&fields=["_id"]`).expect(200);
    expect(ids(res.body).sort((a, b) => a - b)).toEqual(where(test));
  });

  const sortCases = ['age', 'score'].flatMap((field) => [1, -1].map((dir) => ({ label: `sort ${field} ${dir}`, field, dir })));
  it.each(sortCases)('data API $label: 200, out-of-range answers sort as missing', async ({ field, dir }) => {
    const res = await get(`/api/v1/data/${formId}?sort=${encodeURIComponent(JSON.stringify({ [field]: dir }))}&fields=["_id"]`).expect(200);
    const sortedBad = [...bad].sort((a, b) => a - b);
    expect(ids(res.body)).toEqual(dir === 1 ? [...sortedBad, ...ascending()] : [...ascending().reverse(), ...sortedBad]);
  });

  /** docs/forms.md, "Dataviews": numbers compare as numbers, anything else (out-of-range text included) as text in byte order. */
  const compare = (a: number | string, b: number | string) => (a < b ? -1 : a > b ? 1 : 0);
  const FILTERS: Array<[string, (c: number) => boolean]> = [['>', (c) => c > 0], ['>=', (c) => c >= 0], ['<', (c) => c < 0], ['<=', (c) => c <= 0], ['=', (c) => c === 0]];
  const viewCases = FILTERS.map(([filter, test]) => ({ label: `dataview age ${filter}`, filter, test }));

  it.each(viewCases)('$label: list, detail, data, CSV, XLSX, media by dataview all 200', async ({ filter, test }) => {
    const value = filter === '=' ? '7' : '0';
    const view = (await request(sut.url).post('/api/v1/dataviews').set('Authorization', owner.token)
      .send({ name: `v${filter}`, xform: formId, columns: ['age'], query: [{ column: 'age', filter, value }] }).expect(201)).body as { id: number; count: number };
    const expected = [...stored].filter(([id, v]) => test(good.has(id) ? compare(good.get(id)!, Number(value)) : compare(v, value))).map(([id]) => id).sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    expect(view.count).toBe(expected.length);
    // Every dataview of the caller, counted: one bad answer once made this list a 500 for good.
    expect((await get('/api/v1/dataviews').expect(200)).body.length).toBeGreaterThan(0);
    expect((await get(`/api/v1/dataviews/${view.id}`).expect(200)).body.count).toBe(expected.length);
    expect(ids((await get(`/api/v1/dataviews/${view.id}/data?page_size=1000`).expect(200)).body).sort((a, b) => a - b)).toEqual(expected);
    const csv = parse((await get(`/api/v1/dataviews/${view.id}/data.csv`).buffer(true).parse(binary).expect(200)).body as Buffer) as string[][];
    expect(csv.length - 1).toBe(expected.length);
    await get(`/api/v1/dataviews/${view.id}/data.xlsx`).buffer(true).parse(binary).expect(200);
    await get(`/api/v1/media?dataview=${view.id}`).expect(200);
    await get(`/api/v1/media/count?dataview=${view.id}`).expect(200);
    await get(`/api/v1/media.zip?dataview=${view.id}`).buffer(true).parse(binary).expect(200);
  });

  it.each(OUT_OF_RANGE.slice(0, 6).map((value) => ({ value })))('a dataview whose filter value is $value compares as text: 200', async ({ value }) => {
    const view = (await request(sut.url).post('/api/v1/dataviews').set('Authorization', owner.token)
      .send({ name: 'big', xform: formId, columns: ['age'], query: [{ column: 'age', filter: '<', value }] }).expect(201)).body as { id: number };
    await get(`/api/v1/dataviews/${view.id}`).expect(200);
    await get(`/api/v1/dataviews/${view.id}/data`).expect(200);
    await get('/api/v1/dataviews').expect(200);
  });

  it('JSON intake refuses a number answer the reads cannot use: 400 naming the field', async () => {
    const submit = (submission: Record<string, unknown>) => request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'numbers', submission });
    for (const value of OUT_OF_RANGE) {
      const res = await submit({ name: 'x', age: value }).expect(400);
      expect(res.body.submission[0]).toMatch(/^age: an integer question takes a whole number/);
      const dec = await submit({ name: 'x', score: value }).expect(400);
      expect(dec.body.submission[0]).toMatch(/^score: a decimal question takes a number/);
    }
    // Not whole: refused on an integer question, a number on a decimal one.
    expect((await submit({ age: '1.5' }).expect(400)).body).toEqual({ submission: [expect.stringMatching(/^age: /)] });
    for (const value of [...GOOD, 42, -7]) await submit({ name: `ok${String(value)}`, age: value }).expect(201);
    for (const value of ['1.5e3', '-0.25', '.5', '7.', 1e21, 0.1, '1e-999']) await submit({ name: `d${String(value)}`, score: value }).expect(201);
  });

  it('OpenRosa intake stores what the phone sent (as ODK Central does); reads treat it as missing', async () => {
    const xml = `<?xml version="1.0"?><numbers id="numbers"><name>phone</name><age>1e999999</age><score>NaN</score><meta><instanceID>uuid:9a6e0d8e-5b1f-4d5e-9a6b-000000000001</instanceID></meta></numbers>`;
    await request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' }).expect(201);
    await get(`/api/v1/data/${formId}?sort={"age":1}&query={"age":{"$gte":-1000}}`).expect(200);
  });
});
