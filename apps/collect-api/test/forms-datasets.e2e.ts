import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('dataviews and merged datasets', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let otherFormId: number;

  const auth = (r: request.Test) => r.set('Authorization', owner.token);

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    const def = (id: string) => ({
      id_string: id, title: id,
      fields: [{ name: 'name', type: 'text', label: 'Name' }, { name: 'age', type: 'integer', label: 'Age' }, { name: 'code', type: 'text', label: 'Code' }],
    });
    formId = (await auth(request(sut.url).post('/api/v1/forms')).send(def('people')).expect(201)).body.formid;
    otherFormId = (await auth(request(sut.url).post('/api/v1/forms')).send(def('people2')).expect(201)).body.formid;
    const rows = [
      { name: 'Ann', age: 9, code: 'a' },
      { name: 'Bob', age: 10, code: 'b' },
      { name: 'Cid', age: 100, code: '10' },
      { name: 'Dee', code: '9' },
    ];
    for (const row of rows) await auth(request(sut.url).post('/api/v1/submissions')).send({ id: 'people', submission: row }).expect(201);
    await auth(request(sut.url).post('/api/v1/submissions')).send({ id: 'people2', submission: { name: 'Eve', age: 1 } }).expect(201);
  });
  afterAll(() => sut.close());

  async function names(query: unknown[]): Promise<string[]> {
    const view = await auth(request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: formId, columns: ['name', 'age'], query }).expect(201);
    const data = await auth(request(sut.url).get(`/api/v1/dataviews/${view.body.id}/data`)).expect(200);
    expect(view.body.count).toBe(data.body.length);
    return data.body.map((r: { name: string }) => r.name);
  }

  it('=', async () => expect(await names([{ column: 'age', filter: '=', value: '10' }])).toEqual(['Bob']));
  it('>', async () => expect(await names([{ column: 'age', filter: '>', value: 9 }])).toEqual(['Bob', 'Cid']));
  it('<', async () => expect(await names([{ column: 'age', filter: '<', value: '10' }])).toEqual(['Ann']));
  it('>=', async () => expect(await names([{ column: 'age', filter: '>=', value: '10' }])).toEqual(['Bob', 'Cid']));
  it('<=', async () => expect(await names([{ column: 'age', filter: '<=', value: 10 }])).toEqual(['Ann', 'Bob']));
  it('<>', async () => expect(await names([{ column: 'name', filter: '<>', value: 'Ann' }])).toEqual(['Bob', 'Cid', 'Dee']));
  it('!= (a missing answer differs from any value)', async () => expect(await names([{ column: 'age', filter: '!=', value: '10' }])).toEqual(['Ann', 'Cid', 'Dee']));

  it('compares numerically only when both sides are numbers', async () => {
    // Numeric value: "10" > 9 numerically; "a"/"b" are text and compare as text with "9".
    expect(await names([{ column: 'code', filter: '>', value: 9 }])).toEqual(['Ann', 'Bob', 'Cid']);
    // Text value: "10" < "9" as text.
    expect(await names([{ column: 'code', filter: '>', value: 'Z' }])).toEqual(['Ann', 'Bob']);
    // 100 > 9 numerically although "100" < "9" as text.
    expect(await names([{ column: 'age', filter: '>', value: '99' }])).toEqual(['Cid']);
  });

  it('ORs the items with condition "or", ANDed with the others', async () => {
    expect(await names([{ column: 'name', filter: '=', value: 'Ann', condition: 'or' }, { column: 'name', filter: '=', value: 'Cid', condition: 'or' }])).toEqual(['Ann', 'Cid']);
    expect(
      await names([{ column: 'age', filter: '>=', value: 10 }, { column: 'name', filter: '=', value: 'Ann', condition: 'or' }, { column: 'name', filter: '=', value: 'Cid', condition: 'or' }]),
    ).toEqual(['Cid']);
  });

  it('treats hostile values as data and refuses hostile column names (400)', async () => {
    expect(await names([{ column: 'name', filter: '=', value: "' OR 1=1 --" }])).toEqual([]);
    const res = await auth(request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: formId, columns: ['name'], query: [{ column: "name') OR 1=1 --", filter: '=', value: 'x' }] }).expect(400);
    expect(res.body.query).toBeDefined();
    await auth(request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: formId, columns: ['name'], query: [{ column: 'name', filter: 'LIKE', value: 'x' }] }).expect(400);
    await auth(request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: formId, columns: [], query: [] }).expect(400);
    await auth(request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: 999999, columns: ['name'], query: [] }).expect(404);
  });

  it('accepts JSON-encoded columns/query, projects the columns, and PATCH/DELETE work', async () => {
    const view = await auth(request(sut.url).post('/api/v1/dataviews'))
      .send({ name: 'json', xform: String(formId), columns: JSON.stringify(['name']), query: JSON.stringify([{ column: 'age', filter: '<', value: 50 }]) })
      .expect(201);
    expect(view.body).toMatchObject({ name: 'json', xform: formId, columns: ['name'], count: 2 });
    const data = await auth(request(sut.url).get(`/api/v1/dataviews/${view.body.id}/data`)).expect(200);
    expect(Object.keys(data.body[0]).filter((k) => !k.startsWith('_'))).toEqual(['name']);
    const patched = await auth(request(sut.url).patch(`/api/v1/dataviews/${view.body.id}`)).send({ query: [{ column: 'age', filter: '>', value: 50 }] }).expect(200);
    expect(patched.body.count).toBe(1);
    await auth(request(sut.url).delete(`/api/v1/dataviews/${view.body.id}`)).expect(204);
    await auth(request(sut.url).get(`/api/v1/dataviews/${view.body.id}`)).expect(404);
  });

  it('merged datasets: create over visible forms, list, data, delete; invisible forms refused', async () => {
    const stranger = await createTestUser(sut.app);
    const created = await auth(request(sut.url).post('/api/v1/merged-datasets')).send({ name: 'all people', xforms: [formId, otherFormId], project: 'p1' }).expect(201);
    expect(created.body).toMatchObject({ name: 'all people', project: 'p1', num_of_submissions: 5, xforms: [{ id: formId, id_string: 'people' }, { id: otherFormId, id_string: 'people2' }] });
    const list = await auth(request(sut.url).get('/api/v1/merged-datasets')).expect(200);
    expect(list.body.map((m: { id: number }) => m.id)).toContain(created.body.id);
    const data = await auth(request(sut.url).get(`/api/v1/merged-datasets/${created.body.id}/data`)).expect(200);
    expect(data.body).toHaveLength(5);
    await request(sut.url).get(`/api/v1/merged-datasets/${created.body.id}`).set('Authorization', stranger.token).expect(404);
    expect((await request(sut.url).get('/api/v1/merged-datasets').set('Authorization', stranger.token).expect(200)).body).toEqual([]);
    const refused = await request(sut.url).post('/api/v1/merged-datasets').set('Authorization', stranger.token).send({ name: 'x', xforms: [formId, otherFormId] }).expect(400);
    expect(refused.body.xforms).toHaveLength(2);
    await auth(request(sut.url).post('/api/v1/merged-datasets')).send({ name: 'x', xforms: [formId] }).expect(400);
    await request(sut.url).delete(`/api/v1/merged-datasets/${created.body.id}`).set('Authorization', stranger.token).expect(404);
    await auth(request(sut.url).delete(`/api/v1/merged-datasets/${created.body.id}`)).expect(204);
    await auth(request(sut.url).get(`/api/v1/merged-datasets/${created.body.id}`)).expect(404);
    await request(sut.url).get('/api/v1/merged-datasets').expect(401);
  });
});
