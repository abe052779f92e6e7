import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { FOLLOW_UP_XFORM, REGISTRATION_XFORM } from './entities-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

interface EntityJson { id: number; uuid: string; version: number; conflict: string | null; data: Record<string, string>; deleted_at?: string }

/** `/api/v2/entity-lists` (docs/entities.md "API", "Permissions", "Limits"). Real PostgreSQL. */
describe('Entities API', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let manager: TestUser;
  let stranger: TestUser;
  let listId: number;

  const api = () => request(sut.url);
  const as = (u: TestUser) => ({
    get: (path: string) => api().get(path).set('Authorization', u.token),
    post: (path: string) => api().post(path).set('Authorization', u.token),
    patch: (path: string) => api().patch(path).set('Authorization', u.token),
    delete: (path: string) => api().delete(path).set('Authorization', u.token),
  });
  const entities = () => `/api/v2/entity-lists/${listId}/entities`;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    [owner, reader, manager, stranger] = await Promise.all([0, 1, 2, 3].map(() => createTestUser(sut.app)));
    await as(owner).post('/api/v1/forms').attach('xml_file', Buffer.from(REGISTRATION_XFORM), 'form.xml').expect(201);
    const followUp = (await as(owner).post('/api/v1/forms').attach('xml_file', Buffer.from(FOLLOW_UP_XFORM), 'form.xml').expect(201)).body.formid as number;
    await api().put(`/api/v1/forms/${followUp}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    await api().put(`/api/v1/forms/${followUp}/share`).set('Authorization', owner.token).send({ username: manager.username, role: 'manager' }).expect(204);
    listId = ((await as(owner).get('/api/v2/entity-lists').expect(200)).body as Array<{ id: number; name: string }>).find((l) => l.name === 'trees')!.id;
  });
  afterAll(() => sut.close());

  it('lists: created by name (201), a duplicate or a bad name is a 400, deleted with 204', async () => {
    const { body } = await as(owner).post('/api/v2/entity-lists').send({ name: 'plots' }).expect(201);
    expect(body).toMatchObject({ name: 'plots', owner: owner.username, public: false, properties: [], num_entities: 0, registration_forms: [], follow_up_forms: [] });
    await as(owner).post('/api/v2/entity-lists').send({ name: 'plots' }).expect(400);
    for (const name of ['a.b', '__x', '']) await as(owner).post('/api/v2/entity-lists').send({ name }).expect(400);
    await as(owner).delete(`/api/v2/entity-lists/${body.id}`).expect(204);
    await as(owner).get(`/api/v2/entity-lists/${body.id}`).expect(404);
  });

  it('one entity is created and answered; a bulk create is all or nothing and names the first bad item', async () => {
    const uuid = randomUUID();
    const { body } = await as(owner).post(entities()).send({ uuid: `uuid:${uuid.toUpperCase()}`, label: 'Oak one', data: { species: 'oak' } }).expect(201);
    expect(body).toMatchObject({ uuid, version: 1, conflict: null, creator_submission: null, data: { label: 'Oak one', species: 'oak' } });
    await as(owner).post(entities()).send({ uuid, label: 'again' }).expect(400);
    const before = Number((await as(owner).get(entities()).expect(200)).headers['x-total-count']);
    const bad = await as(owner).post(entities()).send({ entities: [{ label: 'a' }, { label: 'b', data: { species: 'x' } }, { label: 'c', data: { colour: 'red' } }] }).expect(400);
    expect(JSON.stringify(bad.body)).toContain('entities[2]');
    expect(Number((await as(owner).get(entities()).expect(200)).headers['x-total-count'])).toBe(before);
    await as(owner).post(entities()).send({ entities: Array.from({ length: 10_001 }, () => ({ label: 'x' })) }).expect(400);
    expect((await as(owner).post(entities()).send({ entities: [{ label: 'a' }, { label: 'b', data: { species: 'elm' } }] }).expect(201)).body).toEqual({ created: 2 });
  });

  it('PATCH merges data as a new version; an unknown property is a 400; a stale base_version is a 409 unless force; "" unsets', async () => {
    const { body: e } = await as(owner).post(entities()).send({ label: 'Birch', data: { species: 'birch', circumference_cm: '30' } }).expect(201);
    const one = `${entities()}/${e.id}`;
    expect((await as(owner).patch(one).query({ base_version: 1 }).send({ data: { health_status: 'good' } }).expect(200)).body).toMatchObject({ version: 2, data: { label: 'Birch', species: 'birch', circumference_cm: '30', health_status: 'good' } });
    await as(owner).patch(one).send({ data: { colour: 'red' } }).expect(400);
    await as(owner).patch(one).query({ base_version: 1 }).send({ label: 'Stale' }).expect(409);
    const forced = (await as(owner).patch(one).query({ base_version: 1, force: 'true' }).send({ label: 'Forced', data: { circumference_cm: '' } }).expect(200)).body as EntityJson;
    expect(forced).toMatchObject({ version: 3, data: { label: 'Forced', species: 'birch', health_status: 'good' } });
    expect(forced.data).not.toHaveProperty('circumference_cm');
  });

  it('deleted entities are 404 and listed only with deleted=true, each with deleted_at; bulk delete by ids', async () => {
    const ids = await Promise.all(['d1', 'd2', 'd3'].map(async (label) => (await as(owner).post(entities()).send({ label }).expect(201)).body.id as number));
    await as(owner).delete(`${entities()}/${ids[0]}`).expect(204);
    await as(owner).get(`${entities()}/${ids[0]}`).expect(404);
    await as(owner).delete(entities()).send({ entity_ids: [ids[1], ids[2]] }).expect(204);
    const live = (await as(owner).get(entities()).expect(200)).body as EntityJson[];
    expect(live.filter((x) => ids.includes(x.id))).toEqual([]);
    const deleted = (await as(owner).get(entities()).query({ deleted: 'true' }).expect(200)).body as EntityJson[];
    expect(deleted.filter((x) => ids.includes(x.id)).map((x) => typeof x.deleted_at)).toEqual(['string', 'string', 'string']);
  });

  it('search is case-insensitive in label and values and takes % and _ literally; without page a listing holds at most 1,000', async () => {
    await as(owner).post(entities()).send({ entities: [{ label: 'Cedar 100%', data: { species: 'CEDRUS' } }, { label: 'Cedar 1000', data: { species: 'cedrus' } }] }).expect(201);
    expect(((await as(owner).get(entities()).query({ search: '100%' }).expect(200)).body as EntityJson[]).map((x) => x.data.label)).toEqual(['Cedar 100%']);
    expect(((await as(owner).get(entities()).query({ search: 'cedrus' }).expect(200)).body as EntityJson[]).length).toBe(2);
    expect(((await as(owner).get(entities()).query({ search: '_' }).expect(200)).body as EntityJson[]).length).toBe(0);
    await as(owner).post(entities()).send({ entities: Array.from({ length: 1_100 }, (_, i) => ({ label: `bulk ${i}` })) }).expect(201);
    const unpaged = await as(owner).get(entities()).query({ page_size: 5000 }).expect(200);
    expect(unpaged.body.length).toBe(1000);
    const total = Number(unpaged.headers['x-total-count']);
    expect(total).toBeGreaterThan(1100);
    expect((await as(owner).get(entities()).query({ page: 1, page_size: 5000 }).expect(200)).body.length).toBe(total);
  });

  it('permissions: a role on a form that uses the list reads, a manager writes, a reader gets 403 on writes, a stranger 404', async () => {
    await as(reader).get(`/api/v2/entity-lists/${listId}`).expect(200);
    await as(reader).get(entities()).expect(200);
    await as(reader).post(entities()).send({ label: 'no' }).expect(403);
    await as(manager).post(entities()).send({ label: 'yes' }).expect(201);
    await as(stranger).get(`/api/v2/entity-lists/${listId}`).expect(404);
    await as(stranger).get(entities()).expect(404);
    expect(((await as(stranger).get('/api/v2/entity-lists').expect(200)).body as unknown[]).length).toBe(0);
    expect(((await as(reader).get('/api/v2/entity-lists').expect(200)).body as Array<{ id: number }>).map((l) => l.id)).toEqual([listId]);
  });
});
