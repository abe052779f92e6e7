import request from 'supertest';
import { DataSource } from 'typeorm';
import { DATA_FORM, seedSubmissions, type SeededSubmission } from './data-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

type Row = Record<string, unknown>;
const N = 10_000;
/** Per-test time limit: the machine is shared, and each case reads up to 10,000 rows. */
const T = 300_000;

/** The reference: the same semantics as docs/data-api.md, computed here over the seeded rows. */
const NUMERIC = new Set(['age', 'score']);
const isNum = (v: unknown) => typeof v === 'string' && /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.test(v);
function valueOf(s: SeededSubmission, field: string): string | number | undefined {
  if (field === '_id') return s.id;
  if (field === '_submission_time') return s.time;
  if (field === '_submitted_by') return s.submittedBy;
  const v = s.json[field];
  return typeof v === 'string' ? v : undefined;
}
function cmp(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
function matches(s: SeededSubmission, query: Record<string, unknown>): boolean {
  return Object.entries(query).every(([field, spec]) => {
    const ops = spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>) : { $eq: spec };
    const v = valueOf(s, field);
    return Object.entries(ops).every(([op, want]) => {
      if (op === '$eq') return want === null ? v === undefined : v !== undefined && String(v) === String(want);
      if (op === '$ne') return want === null ? v !== undefined : !(v !== undefined && String(v) === String(want));
      if (op === '$in') return v !== undefined && (want as unknown[]).some((w) => String(w) === String(v));
      if (v === undefined) return false;
      let c: number;
      if (field === '_id') c = cmp(v as number, Number(want));
      else if (NUMERIC.has(field)) {
        if (!isNum(v)) return false;
        c = cmp(Number(v), Number(want));
      } else c = cmp(String(v), String(want));
      return op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0;
    });
  });
}
function sortKey(s: SeededSubmission, field: string): string | number | undefined {
  if (field === '_submission_time') return s.at;
  const v = valueOf(s, field);
  if (NUMERIC.has(field)) return isNum(v) ? Number(v) : undefined;
  return v;
}
function reference(rows: SeededSubmission[], query: Record<string, unknown>, sort: Record<string, 1 | -1> = {}): number[] {
  const keys = Object.entries(sort);
  return rows
    .filter((s) => matches(s, query))
    .sort((a, b) => {
      for (const [field, dir] of keys) {
        const x = sortKey(a, field);
        const y = sortKey(b, field);
        // A missing value sorts before any value ascending (after them descending).
        const c = x === undefined ? (y === undefined ? 0 : -1) : y === undefined ? 1 : cmp(x, y);
        if (c) return c * dir;
      }
      return a.id - b.id;
    })
    .map((s) => s.id);
}

describe('data API: query, sort, fields, start/limit over 10,000 submissions (PostgreSQL, reference computed here)', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let other: TestUser;
  let formId: number;
  let rows: SeededSubmission[];

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app, { username: 'alice' });
    other = await createTestUser(sut.app, { username: 'bob' });
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(DATA_FORM).expect(201)).body.formid;
    rows = await seedSubmissions(sut.app, formId, [{ id: owner.id, username: 'alice' }, { id: other.id, username: 'bob' }], N);
  }, T);
  afterAll(() => sut.close());

  const get = (params: Record<string, string>) => request(sut.url).get(`/api/v1/data/${formId}`).query(params).set('Authorization', owner.token);
  const ids = async (params: Record<string, string>) => {
    const res = await get({ start: '0', limit: String(N), fields: '["_id"]', ...params }).expect(200);
    return { ids: (res.body as Row[]).map((r) => r._id as number), total: Number(res.headers['x-total-count']), body: res.body as Row[] };
  };

  const cases: Array<[string, Record<string, unknown>, Record<string, 1 | -1>?]> = [
    ['equality on a select one', { district: 'north' }],
    ['equality on an integer given as a number', { age: 42 }],
    ['numeric range on an integer (non-numbers never match)', { age: { $gt: 20, $lte: 60 } }],
    ['numeric range on a decimal', { score: { $gte: 5.5, $lt: 12.25 } }],
    ['text order on a text field', { name: { $lt: 'Dan' } }],
    ['$in and $ne together', { district: { $in: ['north', 'east'] }, age: { $ne: '30' } }],
    ['missing answer ($eq null)', { note: null }],
    ['present answer ($ne null)', { note: { $ne: null } }],
    ['_submitted_by', { _submitted_by: 'bob' }],
    ['_id range', { _id: { $gte: 0, $lt: 0 } }],
    ['_submission_time at a second and ranges', { _submission_time: { $gte: '2026-01-01T10:00:00', $lt: '2026-01-01T11:00:00' } }],
    ['sort numeric descending then text', {}, { age: -1, name: 1 }],
    ['sort decimal ascending with a filter', { district: 'west' }, { score: 1 }],
    ['sort by submitter then time descending', {}, { _submitted_by: 1, _submission_time: -1 }],
  ];

  // One argument per row (jest-each would take a missing third argument for a `done` callback).
  it.each(cases.map(([label, query, sort]) => ({ label, query, sort })))('$label matches the reference', async ({ query, sort }) => {
    // `_id` bounds depend on the ids the database gave.
    const q = JSON.parse(JSON.stringify(query).replace('"$gte":0,"$lt":0', `"$gte":${rows[100].id},"$lt":${rows[2500].id}`)) as Record<string, unknown>;
    const expected = reference(rows, q, sort);
    expect(expected.length).toBeGreaterThan(0);
    const got = await ids({ query: JSON.stringify(q), ...(sort ? { sort: JSON.stringify(sort) } : {}) });
    expect(got.total).toBe(expected.length);
    expect(got.ids).toEqual(expected);
  }, T);

  it('one second of _submission_time: $eq matches exactly the rows shown with that time', async () => {
    const at = rows[501].time;
    const expected = rows.filter((r) => r.time === at).map((r) => r.id);
    expect(expected.length).toBe(2);
    expect((await ids({ query: JSON.stringify({ _submission_time: at }) })).ids).toEqual(expected);
  }, T);

  it('fields keeps only the named keys plus _id; missing answers stay absent', async () => {
    const { body } = await ids({ fields: JSON.stringify(['name', 'age', '_submission_time']), query: JSON.stringify({ district: 'south' }) });
    const expected = rows.filter((r) => r.json.district === 'south');
    expect(body).toHaveLength(expected.length);
    body.forEach((item, i) => {
      const s = expected[i];
      const want: Row = { _id: s.id, _submission_time: s.time };
      if (typeof s.json.name === 'string') want.name = s.json.name;
      if (typeof s.json.age === 'string') want.age = s.json.age;
      expect(item).toEqual(want);
    });
  }, T);

  it('start/limit and page/page_size window the sorted result in PostgreSQL', async () => {
    const sort = { score: -1 };
    const expected = reference(rows, {}, sort);
    const window = await get({ sort: JSON.stringify(sort), start: '1234', limit: '50' }).expect(200);
    expect((window.body as Row[]).map((r) => r._id)).toEqual(expected.slice(1234, 1284));
    expect(window.headers['x-total-count']).toBe(String(N));
    expect(window.headers.link).toBeUndefined();
    const page = await get({ sort: JSON.stringify(sort), page: '3', page_size: '100' }).expect(200);
    expect((page.body as Row[]).map((r) => r._id)).toEqual(expected.slice(200, 300));
    expect(page.headers.link).toContain('rel="next"');
    await get({ page: '101', page_size: '100' }).expect(404);
  }, T);

  it('a page of the full JSON is the same as the one-record endpoint and as the forwarders\u2019 builder', async () => {
    const page = (await get({ page_size: '5' }).expect(200)).body as Row[];
    for (const item of page) {
      const one = await request(sut.url).get(`/api/v1/data/${formId}/${String(item._id)}`).set('Authorization', owner.token).expect(200);
      expect(one.body).toEqual(item);
    }
    const { SubmissionsService } = await import('../src/submissions/submissions.service.js');
    const built = await sut.app.get(SubmissionsService).loadSubmissionJson(page[0]._id as number);
    expect(built!.json).toEqual(page[0]);
  }, T);

  it('malformed parameters answer 400 naming the parameter; nothing is run', async () => {
    const bad: Array<[Record<string, string>, string]> = [
      [{ query: '{"age": ' }, 'query'],
      [{ query: '[1,2]' }, 'query'],
      [{ query: '{"age": {"$regex": "x"}}' }, 'query'],
      [{ query: '{"age": {"$gt": {"$gt": 1}}}' }, 'query'],
      [{ query: '{"$where": "1"}' }, 'query'],
      [{ query: '{"age; DROP TABLE submissions": 1}' }, 'query'],
      [{ query: '{"age": {"$gt": "old"}}' }, 'query'],
      [{ query: '{"_submission_time": {"$gt": "yesterday"}}' }, 'query'],
      [{ query: '{"district": {"$in": []}}' }, 'query'],
      [{ query: JSON.stringify({ a: 'x'.repeat(9000) }) }, 'query'],
      [{ query: '['.repeat(5000) }, 'query'],
      [{ sort: '{"age": 2}' }, 'sort'],
      [{ sort: '"age"' }, 'sort'],
      [{ fields: '{"a": 1}' }, 'fields'],
      [{ start: '-1' }, 'start'],
      [{ limit: 'ten' }, 'limit'],
    ];
    for (const [params, name] of bad) {
      const res = await get(params);
      expect([res.status, Object.keys(res.body)]).toEqual([400, [name]]);
    }
    expect(Number((await sut.app.get(DataSource).query('SELECT count(*) AS n FROM submissions'))[0].n)).toBe(N);
  }, T);

  it('the same query rules apply to readonly users; strangers get 404', async () => {
    const stranger = await createTestUser(sut.app);
    await request(sut.url).get(`/api/v1/data/${formId}`).query({ query: '{"district":"north"}' }).set('Authorization', stranger.token).expect(404);
  });

  it('_geolocation built in SQL equals the forwarders\u2019 builder for every shape of geopoint answer', async () => {
    const geo = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token)
      .send({ id_string: 'geo_page', title: 'Geo', fields: [{ name: 'loc', type: 'geopoint' }, { name: 'n', type: 'text' }] }).expect(201)).body.formid as number;
    const answers = ['-1.2864 36.8172 0 0', '  1.5   2  ', '1', 'a b', '1 b', '.5 -3.', '1e3 2E-2 5', '', '12 34\n'];
    for (const [i, loc] of answers.entries()) {
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'geo_page', submission: { loc, n: String(i) } }).expect(201);
    }
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'geo_page', submission: { n: 'none' } }).expect(201);
    const page = (await request(sut.url).get(`/api/v1/data/${geo}`).set('Authorization', owner.token).expect(200)).body as Row[];
    expect(page).toHaveLength(answers.length + 1);
    const { SubmissionsService } = await import('../src/submissions/submissions.service.js');
    for (const item of page) {
      const built = await sut.app.get(SubmissionsService).loadSubmissionJson(item._id as number);
      expect([item.n, item._geolocation]).toEqual([item.n, built!.json._geolocation]);
    }
    expect(page.map((r) => r._geolocation)).toEqual([[-1.2864, 36.8172], [1.5, 2], [null, null], [null, null], [null, null], [0.5, -3], [1000, 0.02], [null, null], [12, 34], [null, null]]);
  }, T);
});
