import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { EntityApplyService, HELD_DAYS, MAX_HELD_PER_LIST } from '../src/entities/intake/entity-apply.service.js';
import { EntityListsRepository } from '../src/entities/lists/entity-lists.repository.js';
import { FOLLOW_UP_XFORM, followUpInstance, REGISTRATION_XFORM, registrationInstance, REPEAT_XFORM, repeatInstance } from './entities-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

interface EntityJson { id: number; uuid: string; version: number; conflict: string | null; creator_submission: number | null; data: Record<string, string> }

/**
 * Entities from submissions (docs/entities.md "Submissions", "Conflicts", "Offline branches",
 * "Held updates", "Errors"), with XForms as pyxform 4.5 writes them. Real PostgreSQL.
 */
describe('Entities from submissions', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let listId: number;
  let registrationPk: number;

  const api = () => request(sut.url);
  const publish = async (xml: string) => (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(xml), 'form.xml').expect(201)).body.formid as number;
  const submit = (xml: string) =>
    api().post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' }).expect(201);
  const entityByUuid = async (uuid: string): Promise<EntityJson> => {
    const rows = (await api().get(`/api/v2/entity-lists/${listId}/entities`).query({ page_size: 1000 }).set('Authorization', owner.token).expect(200)).body as EntityJson[];
    const found = rows.find((e) => e.uuid === uuid);
    if (!found) throw new Error(`no entity ${uuid}`);
    return found;
  };
  const submissionJson = async (formPk: number, instanceId: string) => {
    const rows = (await api().get(`/api/v1/data/${formPk}`).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;
    return rows.find((r) => r._uuid === instanceId)!;
  };
  const heldCount = async () => Number(((await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM entity_held_updates`)) as Array<{ n: number }>)[0]!.n);
  const register = async (entityId: string, species = 'oak', circumference = '100') => {
    await submit(registrationInstance({ instanceId: randomUUID(), entityId, species, circumference }));
    return entityByUuid(entityId);
  };

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    registrationPk = await publish(REGISTRATION_XFORM);
    await publish(FOLLOW_UP_XFORM);
    const lists = (await api().get('/api/v2/entity-lists').set('Authorization', owner.token).expect(200)).body as Array<{ id: number; name: string }>;
    listId = lists.find((l) => l.name === 'trees')!.id;
  });
  afterAll(() => sut.close());

  it('publishing creates the list under the owner with the save_to properties of both forms, and names the registration and follow-up forms', async () => {
    const { body } = await api().get(`/api/v2/entity-lists/${listId}`).set('Authorization', owner.token).expect(200);
    expect(body).toMatchObject({ name: 'trees', owner: owner.username, public: false, num_registration_forms: 1, num_follow_up_forms: 1 });
    expect(body.properties).toEqual(['species', 'circumference_cm', 'health_status']);
    expect(body.registration_forms).toEqual([expect.objectContaining({ id_string: 'trees_registration', save_to: ['species', 'circumference_cm'] })]);
    expect(body.follow_up_forms).toEqual([expect.objectContaining({ id_string: 'trees_followup' })]);
  });

  it('a registration submission creates the entity; a follow-up submission updates it and raises its version, keeping the label', async () => {
    const id = randomUUID();
    const created = await register(id, 'oak', '120');
    expect(created).toMatchObject({ version: 1, conflict: null, data: { label: 'oak 120', species: 'oak', circumference_cm: '120' } });
    expect(typeof created.creator_submission).toBe('number');
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: id.toUpperCase(), baseVersion: '1', circumference: '130', health: 'good' }));
    expect(await entityByUuid(id)).toMatchObject({ version: 2, conflict: null, data: { label: 'oak 120', species: 'oak', circumference_cm: '130', health_status: 'good' } });
  });

  it('a JSON submission gives the entity block as child values and creates the entity in the same way', async () => {
    const id = randomUUID();
    await api().post('/api/v1/submissions').set('Authorization', owner.token)
      .send({ id: 'trees_registration', submission: { species: 'elm', circumference: '80', meta: { instanceID: `uuid:${randomUUID()}`, entity: { id: `uuid:${id}`, dataset: 'trees', create: '1', label: 'elm 80' } } } })
      .expect(201);
    expect(await entityByUuid(id)).toMatchObject({ version: 1, data: { label: 'elm 80', species: 'elm', circumference_cm: '80' } });
  });

  it('an update built on an older version is applied and marked: soft when it touches other properties, hard when the same ones with other values; resolve clears it', async () => {
    const soft = randomUUID();
    await register(soft);
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: soft, baseVersion: '1', health: 'good' }));
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: soft, baseVersion: '1', circumference: '140' }));
    expect(await entityByUuid(soft)).toMatchObject({ version: 3, conflict: 'soft', data: { health_status: 'good', circumference_cm: '140' } });

    const hard = randomUUID();
    await register(hard);
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: hard, baseVersion: '1', health: 'good' }));
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: hard, baseVersion: '1', health: 'poor' }));
    const e = await entityByUuid(hard);
    expect(e).toMatchObject({ version: 3, conflict: 'hard', data: { health_status: 'poor' } });
    // A later update without a conflict of its own leaves the hard conflict in place.
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: hard, baseVersion: '3', circumference: '150' }));
    expect(await entityByUuid(hard)).toMatchObject({ version: 4, conflict: 'hard' });
    const { body } = await api().patch(`/api/v2/entity-lists/${listId}/entities/${e.id}`).query({ resolve: 'true' }).set('Authorization', owner.token).send({}).expect(200);
    expect(body).toMatchObject({ version: 4, conflict: null });
  });

  it('an offline branch of three updates arriving out of order (third, first, second) is applied in branch order', async () => {
    const id = randomUUID();
    await register(id);
    const branchId = randomUUID();
    const update = (baseVersion: string, health: string) => followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion, trunkVersion: '1', branchId, health });
    await submit(update('3', 'third'));
    expect(await heldCount()).toBe(1);
    await submit(update('1', 'first'));
    expect(await entityByUuid(id)).toMatchObject({ version: 2, data: { health_status: 'first' } });
    await submit(update('2', 'second'));
    expect(await entityByUuid(id)).toMatchObject({ version: 4, conflict: null, data: { health_status: 'third' } });
    expect(await heldCount()).toBe(0);
    const versions = (await sut.app.get(DataSource).query(
      `SELECT v.version, v.base_version, v.branch_base_version, v.data ->> 'health_status' AS health FROM entity_versions v JOIN entities e ON e.id = v.entity_id WHERE e.uuid = $1 ORDER BY v.version`, [id],
    )) as Array<{ version: number; base_version: number | null; branch_base_version: number | null; health: string | null }>;
    expect(versions.map((v) => [v.version, v.base_version, v.branch_base_version, v.health])).toEqual([[1, null, null, null], [2, 1, 1, 'first'], [3, 2, 2, 'second'], [4, 3, 3, 'third']]);
  });

  it('an update that arrives before the create it depends on is held, then applied when the create arrives', async () => {
    const id = randomUUID();
    const branchId = randomUUID();
    const instanceId = randomUUID();
    await submit(followUpInstance({ instanceId, entityId: id, baseVersion: '1', branchId, health: 'checked' }));
    expect(await heldCount()).toBe(1);
    const followUpPk = (await api().get('/api/v1/forms').set('Authorization', owner.token).expect(200)).body.find((f: { id_string: string }) => f.id_string === 'trees_followup').formid as number;
    expect((await submissionJson(followUpPk, instanceId))._entity_errors).toBeUndefined();
    await register(id, 'ash', '60');
    expect(await entityByUuid(id)).toMatchObject({ version: 2, conflict: null, data: { species: 'ash', health_status: 'checked' } });
    expect(await heldCount()).toBe(0);
  });

  it(`an update held longer than ${HELD_DAYS} days is applied on the current version, or refused into _entity_errors when its entity never came`, async () => {
    const id = randomUUID();
    await register(id);
    const gap = randomUUID();
    const never = randomUUID();
    await submit(followUpInstance({ instanceId: gap, entityId: id, baseVersion: '3', trunkVersion: '1', branchId: randomUUID(), health: 'late' }));
    await submit(followUpInstance({ instanceId: never, entityId: randomUUID(), baseVersion: '1', branchId: randomUUID(), health: 'lost' }));
    expect(await heldCount()).toBe(2);
    const db = sut.app.get(DataSource);
    await db.query(`UPDATE entity_held_updates SET held_at = now() - make_interval(days => $1)`, [HELD_DAYS + 1]);
    const list = (await sut.app.get(EntityListsRepository).find(listId))!;
    expect(await db.transaction((m) => sut.app.get(EntityApplyService).expireHeld(m, list))).toBe(2);
    expect(await heldCount()).toBe(0);
    expect(await entityByUuid(id)).toMatchObject({ version: 2, data: { health_status: 'late' } });
    const followUpPk = (await api().get('/api/v1/forms').set('Authorization', owner.token).expect(200)).body.find((f: { id_string: string }) => f.id_string === 'trees_followup').formid as number;
    expect((await submissionJson(followUpPk, never))._entity_errors).toEqual([expect.objectContaining({ list: 'trees', error: expect.stringContaining('never arrived') })]);
  });

  it(`at most ${MAX_HELD_PER_LIST} updates are held per list: a further one is refused into _entity_errors`, async () => {
    const db = sut.app.get(DataSource);
    const [{ id: anySubmission }] = (await db.query(`SELECT id FROM submissions ORDER BY id LIMIT 1`)) as Array<{ id: number }>;
    await db.query(
      `INSERT INTO entity_held_updates (list_id, submission_id, entity_uuid, branch_id, branch_base_version, item)
       SELECT $1, $2, gen_random_uuid(), gen_random_uuid(), 2, '{}'::jsonb FROM generate_series(1, $3)`,
      [listId, anySubmission, MAX_HELD_PER_LIST],
    );
    try {
      const instanceId = randomUUID();
      await submit(followUpInstance({ instanceId, entityId: randomUUID(), baseVersion: '1', branchId: randomUUID(), health: 'waiting' }));
      const followUpPk = (await api().get('/api/v1/forms').set('Authorization', owner.token).expect(200)).body.find((f: { id_string: string }) => f.id_string === 'trees_followup').formid as number;
      expect((await submissionJson(followUpPk, instanceId))._entity_errors).toEqual([expect.objectContaining({ error: expect.stringContaining('was not kept') })]);
      expect(await heldCount()).toBe(MAX_HELD_PER_LIST);
    } finally {
      await db.query(`DELETE FROM entity_held_updates WHERE item = '{}'::jsonb`);
    }
  });

  it('an offline create and its update arriving at the same time are both applied, whichever runs first', async () => {
    for (let round = 0; round < 3; round++) {
      const id = randomUUID();
      await Promise.all([
        submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'yew', circumference: '5' })),
        submit(followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion: '1', branchId: randomUUID(), health: 'fine' })),
      ]);
      expect(await entityByUuid(id)).toMatchObject({ version: 2, data: { species: 'yew', health_status: 'fine' } });
    }
    expect(await heldCount()).toBe(0);
  });

  it('a bad uuid or an unknown list keeps the submission and records _entity_errors in the data API; an edit that fixes it creates the entity', async () => {
    const badId = randomUUID();
    await submit(registrationInstance({ instanceId: badId, entityId: 'not-a-uuid', species: 'fir', circumference: '10' }));
    expect((await submissionJson(registrationPk, badId))._entity_errors).toEqual([{ list: 'trees', uuid: 'not-a-uuid', error: expect.stringContaining('not a version 4 UUID') }]);

    const unknownId = randomUUID();
    const entityId = randomUUID();
    await submit(registrationInstance({ instanceId: unknownId, entityId, species: 'fir', circumference: '10', list: 'bushes' }));
    const kept = await submissionJson(registrationPk, unknownId);
    expect(kept.species).toBe('fir');
    expect(kept._entity_errors).toEqual([{ list: 'bushes', uuid: entityId, error: expect.stringContaining('no entity list "bushes"') }]);

    const editId = randomUUID();
    await submit(registrationInstance({ instanceId: editId, entityId, species: 'fir', circumference: '11', deprecatedId: unknownId }));
    expect((await submissionJson(registrationPk, editId))._entity_errors).toBeUndefined();
    expect(await entityByUuid(entityId)).toMatchObject({ version: 1, data: { circumference_cm: '11' } });
    // A submission acts on entities once: a further edit changes nothing.
    await submit(registrationInstance({ instanceId: randomUUID(), entityId, species: 'fir', circumference: '12', deprecatedId: editId }));
    expect(await entityByUuid(entityId)).toMatchObject({ version: 1, data: { circumference_cm: '11' } });
  });

  it('a block in a repeat makes one entity per repeat item', async () => {
    await publish(REPEAT_XFORM);
    const people = ((await api().get('/api/v2/entity-lists').set('Authorization', owner.token).expect(200)).body as Array<{ id: number; name: string }>).find((l) => l.name === 'people')!;
    const [a, b] = [randomUUID(), randomUUID()];
    await submit(repeatInstance(randomUUID(), [{ id: a, name: 'Ada', age: '30' }, { id: b, name: 'Ben', age: '4' }]));
    const rows = (await api().get(`/api/v2/entity-lists/${people.id}/entities`).set('Authorization', owner.token).expect(200)).body as EntityJson[];
    expect(rows.map((r) => [r.uuid, r.data]).sort()).toEqual([[a, { full_name: 'Ada', age: '30', label: 'Ada' }], [b, { full_name: 'Ben', age: '4', label: 'Ben' }]].sort());
  });

  it('a form whose entity block saves to a reserved property name is refused at publishing', async () => {
    const bad = REGISTRATION_XFORM.replace('trees_registration', 'bad_reg').replace('entities:saveto="species"', 'entities:saveto="name"');
    const { body } = await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(bad), 'form.xml').expect(400);
    expect(JSON.stringify(body)).toContain('reserved');
  });
});
