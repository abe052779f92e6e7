import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { EntityIntakeService } from '../src/entities/intake/entity-intake.service.js';
import { HeldUpdatesRepository } from '../src/entities/intake/held-updates.repository.js';
import { SubmissionsRepository } from '../src/submissions/submissions.repository.js';
import type { EntityInsertResult } from '../src/submissions/submission-entity-insert.js';
import { FOLLOW_UP_XFORM, followUpInstance, REGISTRATION_XFORM, registrationInstance } from './entities-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

interface EntityJson { id: number; uuid: string; version: number; conflict: string | null; data: Record<string, string> }

/**
 * Intake's one statement for submissions with entity work (docs/entities.md, "Intake: one
 * statement"): what it stores is what the transactional path stores, it declines what it cannot
 * decide, and under concurrency (the same entity uuid, the same base version, a duplicate
 * instance) every submission is kept and the entity rules hold. Real PostgreSQL.
 */
describe('Entity intake in one statement', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let listId: number;
  let registrationPk: number;
  let followUpPk: number;
  let outcomes: EntityInsertResult[];

  const api = () => request(sut.url);
  const db = () => sut.app.get(DataSource);
  const publish = async (xml: string) => (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(xml), 'form.xml').expect(201)).body.formid as number;
  const submit = (xml: string) =>
    api().post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' });
  const entityByUuid = async (uuid: string): Promise<EntityJson> => {
    const rows = (await api().get(`/api/v2/entity-lists/${listId}/entities`).query({ page_size: 1000 }).set('Authorization', owner.token).expect(200)).body as EntityJson[];
    return rows.find((e) => e.uuid === uuid)!;
  };
  const submissionJson = async (formPk: number, instanceId: string) => {
    const rows = (await api().get(`/api/v1/data/${formPk}`).query({ page_size: 1000 }).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;
    return rows.find((r) => r._uuid === instanceId);
  };
  const revision = async () => Number(((await db().query(`SELECT revision FROM entity_lists WHERE id = $1`, [listId])) as Array<{ revision: string }>)[0]!.revision);

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    registrationPk = await publish(REGISTRATION_XFORM);
    followUpPk = await publish(FOLLOW_UP_XFORM);
    listId = ((await api().get('/api/v2/entity-lists').set('Authorization', owner.token).expect(200)).body as Array<{ id: number; name: string }>).find((l) => l.name === 'trees')!.id;
    // The first submission to a list runs the held updates' time check: the transactional path.
    await submit(registrationInstance({ instanceId: randomUUID(), entityId: randomUUID(), species: 'oak', circumference: '1' })).expect(201);
    const repo = sut.app.get(SubmissionsRepository);
    const original = repo.insertCheckedAloneWithEntity.bind(repo);
    jest.spyOn(repo, 'insertCheckedAloneWithEntity').mockImplementation(async (item, text) => {
      const result = await original(item, text);
      outcomes.push(result);
      return result;
    });
  });
  beforeEach(() => {
    outcomes = [];
  });
  afterAll(() => sut.close());

  it('a registration and an update are each stored by the one statement: entity, version, revision and submission as the transactional path writes them', async () => {
    const id = randomUUID();
    const before = await revision();
    const instanceId = randomUUID();
    await submit(registrationInstance({ instanceId, entityId: id.toUpperCase(), species: 'elm', circumference: '80' })).expect(201);
    expect(outcomes.map((o) => o.created !== null)).toEqual([true]);
    const created = await entityByUuid(id);
    expect(created).toMatchObject({ version: 1, conflict: null, data: { label: 'elm 80', species: 'elm', circumference_cm: '80' } });
    expect(await revision()).toBe(before + 1);
    const stored = await submissionJson(registrationPk, instanceId);
    expect(stored).toMatchObject({ species: 'elm' });
    expect(stored!._entity_errors).toBeUndefined();

    const updateId = randomUUID();
    await submit(followUpInstance({ instanceId: updateId, entityId: id, baseVersion: '1', health: 'good' })).expect(201);
    expect(outcomes.map((o) => o.created !== null)).toEqual([true, true]);
    expect(await entityByUuid(id)).toMatchObject({ version: 2, conflict: null, data: { label: 'elm 80', species: 'elm', health_status: 'good' } });
    expect(await revision()).toBe(before + 2);
    const versions = (await db().query(
      `SELECT v.version, v.base_version, v.data_received, v.source, v.submission_id, s.uuid AS instance FROM entity_versions v JOIN entities e ON e.id = v.entity_id
       JOIN submissions s ON s.id = v.submission_id WHERE e.uuid = $1 ORDER BY v.version`, [id],
    )) as Array<{ version: number; base_version: number | null; data_received: Record<string, string>; source: string; instance: string }>;
    expect(versions).toEqual([
      expect.objectContaining({ version: 1, base_version: null, source: 'submission', instance: instanceId, data_received: { label: 'elm 80', species: 'elm', circumference_cm: '80' } }),
      expect.objectContaining({ version: 2, base_version: 1, source: 'submission', instance: updateId, data_received: { health_status: 'good' } }),
    ]);
  });

  it('a registration and an update in one batch are one statement: both stored, the revision of the list raised once', async () => {
    const id = randomUUID();
    await submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'oak', circumference: '11' })).expect(201);
    const spied = jest.mocked(sut.app.get(SubmissionsRepository).insertCheckedAloneWithEntity);
    const through = spied.getMockImplementation()!;
    // Both calls go on in the same turn, so the group commit puts them in one batch.
    const waiting: Array<() => void> = [];
    spied.mockImplementation((item, text) => new Promise<EntityInsertResult>((resolve, reject) => {
      waiting.push(() => void through(item, text).then(resolve, reject));
      if (waiting.length === 2) for (const go of waiting.splice(0)) go();
    }));
    try {
      outcomes = [];
      const before = await revision();
      const fresh = randomUUID();
      await Promise.all([
        submit(registrationInstance({ instanceId: randomUUID(), entityId: fresh, species: 'ash', circumference: '12' })).expect(201),
        submit(followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion: '1', health: 'good' })).expect(201),
      ]);
      expect(outcomes.map((o) => o.created !== null)).toEqual([true, true]);
      expect(await revision()).toBe(before + 1);
      expect(await entityByUuid(fresh)).toMatchObject({ version: 1, conflict: null, data: { label: 'ash 12', species: 'ash', circumference_cm: '12' } });
      expect(await entityByUuid(id)).toMatchObject({ version: 2, conflict: null, data: { label: 'oak 11', species: 'oak', health_status: 'good' } });
      const versions = (await db().query(
        `SELECT e.uuid::text AS uuid, v.version, v.base_version, v.data_received FROM entity_versions v JOIN entities e ON e.id = v.entity_id
         WHERE e.uuid = ANY($1::uuid[]) ORDER BY e.uuid, v.version`, [[id, fresh]],
      )) as Array<{ uuid: string; version: number; base_version: number | null; data_received: Record<string, string> }>;
      expect(versions).toEqual(expect.arrayContaining([
        { uuid: fresh, version: 1, base_version: null, data_received: { label: 'ash 12', species: 'ash', circumference_cm: '12' } },
        { uuid: id, version: 2, base_version: 1, data_received: { health_status: 'good' } },
      ]));
      expect(versions).toHaveLength(3);
    } finally {
      spied.mockImplementation(through);
    }
  });

  it('what the statement cannot decide it leaves to the transactional path: an update on an older version (a conflict), an existing uuid, a missing entity', async () => {
    const id = randomUUID();
    await submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'ash', circumference: '5' })).expect(201);
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion: '1', health: 'good' })).expect(201);
    outcomes = [];
    await submit(followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion: '1', health: 'poor' })).expect(201);
    expect(outcomes.map((o) => o.declined)).toEqual([true]);
    expect(await entityByUuid(id)).toMatchObject({ version: 3, conflict: 'hard', data: { health_status: 'poor' } });

    const again = randomUUID();
    await submit(registrationInstance({ instanceId: again, entityId: id, species: 'ash', circumference: '6' })).expect(201);
    const missing = randomUUID();
    await submit(followUpInstance({ instanceId: missing, entityId: randomUUID(), baseVersion: '1', health: 'x' })).expect(201);
    expect(outcomes.map((o) => o.declined)).toEqual([true, true, true]);
    expect((await submissionJson(registrationPk, again))!._entity_errors).toEqual([expect.objectContaining({ error: expect.stringContaining('exists already') })]);
    expect((await submissionJson(followUpPk, missing))!._entity_errors).toEqual([expect.objectContaining({ error: expect.stringContaining('No entity') })]);
  });

  it('concurrent registrations of one uuid: every submission is kept, one entity is made, the others are refused into _entity_errors', async () => {
    const id = randomUUID();
    const instances = Array.from({ length: 8 }, () => randomUUID());
    const answers = await Promise.all(instances.map((instanceId, k) => submit(registrationInstance({ instanceId, entityId: id, species: 'yew', circumference: String(k) }))));
    expect(answers.map((a) => a.status)).toEqual(instances.map(() => 201));
    const [{ n }] = (await db().query(`SELECT count(*)::int AS n FROM entities WHERE list_id = $1 AND uuid = $2`, [listId, id])) as Array<{ n: number }>;
    expect(n).toBe(1);
    const stored = await Promise.all(instances.map((instanceId) => submissionJson(registrationPk, instanceId)));
    expect(stored.every((s) => s !== undefined)).toBe(true);
    expect(stored.filter((s) => s!._entity_errors === undefined)).toHaveLength(1);
    expect(await entityByUuid(id)).toMatchObject({ version: 1 });
  });

  it('concurrent updates from the same base version: all kept and applied, one without conflict and the rest marked, as one after the other', async () => {
    const id = randomUUID();
    await submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'fir', circumference: '9' })).expect(201);
    const instances = Array.from({ length: 6 }, () => randomUUID());
    await Promise.all(instances.map((instanceId, k) => submit(followUpInstance({ instanceId, entityId: id, baseVersion: '1', circumference: String(10 + k) })).expect(201)));
    const entity = await entityByUuid(id);
    expect(entity).toMatchObject({ version: 1 + instances.length, conflict: 'hard' });
    const versions = (await db().query(
      `SELECT v.version, v.base_version, v.conflict FROM entity_versions v JOIN entities e ON e.id = v.entity_id WHERE e.uuid = $1 ORDER BY v.version`, [id],
    )) as Array<{ version: number; base_version: number | null; conflict: string | null }>;
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(versions.filter((v) => v.version > 1 && v.conflict === null)).toHaveLength(1);
    expect(versions.slice(1).every((v) => v.base_version === 1)).toBe(true);
    const stored = await Promise.all(instances.map((instanceId) => submissionJson(followUpPk, instanceId)));
    expect(stored.every((s) => s !== undefined && s._entity_errors === undefined)).toBe(true);
  });

  it('the same instance sent twice at once is stored once and acts on its entity once', async () => {
    const id = randomUUID();
    await submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'box', circumference: '2' })).expect(201);
    const xml = followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion: '1', health: 'twice' });
    const answers = await Promise.all([submit(xml), submit(xml), submit(xml)]);
    // One is stored; the others are answered as duplicates (OpenRosa 202).
    expect(answers.map((a) => a.status).sort()).toEqual([201, 202, 202]);
    expect(await entityByUuid(id)).toMatchObject({ version: 2, conflict: null, data: { health_status: 'twice' } });
  });

  it('an update held for an entity the statement made is applied when the statement finds it after its commit', async () => {
    const id = randomUUID();
    await submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'pine', circumference: '3' })).expect(201);
    // A hold committed while the statement ran (between its snapshot and its lock) is what the read after the commit finds.
    const holder = randomUUID();
    await submit(registrationInstance({ instanceId: holder, entityId: randomUUID(), species: 'pine', circumference: '4' })).expect(201);
    const [{ id: submissionId }] = (await db().query(`SELECT id FROM submissions WHERE uuid = $1`, [holder])) as Array<{ id: number }>;
    const branchId = randomUUID();
    await db().transaction((m) => sut.app.get(HeldUpdatesRepository).hold(m, listId, submissionId, {
      list: 'trees', uuid: id, create: false, update: true, label: null, data: { health_status: 'held' }, baseVersion: 1, trunkVersion: 1, branchId, submitterId: owner.id,
    }));
    await sut.app.get(EntityIntakeService).releaseHeldAfterStatement(listId, id);
    expect(await entityByUuid(id)).toMatchObject({ version: 2, data: { health_status: 'held' } });
    const [{ n }] = (await db().query(`SELECT count(*)::int AS n FROM entity_held_updates WHERE entity_uuid = $1`, [id])) as Array<{ n: number }>;
    expect(n).toBe(0);
  });

  it('a hold committed while the statement waits on its list is found after its commit: the entity the statement made gets the held update', async () => {
    const id = randomUUID();
    const holder = randomUUID();
    await submit(registrationInstance({ instanceId: holder, entityId: randomUUID(), species: 'cedar', circumference: '4' })).expect(201);
    const [{ id: submissionId }] = (await db().query(`SELECT id FROM submissions WHERE uuid = $1`, [holder])) as Array<{ id: number }>;
    // The hold is made in a transaction that stays open: it counts itself on the list, whose row it keeps locked.
    const holding = db().createQueryRunner();
    await holding.connect();
    await holding.startTransaction();
    await sut.app.get(HeldUpdatesRepository).hold(holding.manager, listId, submissionId, {
      list: 'trees', uuid: id, create: false, update: true, label: null, data: { health_status: 'held' }, baseVersion: 1, trunkVersion: 1, branchId: randomUUID(), submitterId: owner.id,
    });
    // The registration's statement takes its snapshot without the hold and waits on the list's row (the only row the open transaction locks).
    outcomes = [];
    let answered = false;
    const registering = submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'cedar', circumference: '5' })).then((res) => {
      answered = true;
      return res;
    });
    for (let waiting = 0; waiting === 0; ) {
      expect(answered).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 20));
      waiting = ((await db().query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH input AS%'`,
      )) as Array<{ n: number }>)[0]!.n;
    }
    await holding.commitTransaction();
    await holding.release();
    expect((await registering).status).toBe(201);
    expect(outcomes.map((o) => o.declined)).toEqual([false]);
    expect(await entityByUuid(id)).toMatchObject({ version: 2, data: { species: 'cedar', health_status: 'held' } });
    const [{ n }] = (await db().query(`SELECT count(*)::int AS n FROM entity_held_updates WHERE entity_uuid = $1`, [id])) as Array<{ n: number }>;
    expect(n).toBe(0);
  });

  it('the statement writes the outbox rows of the submission and of its entity change, with the entity as that version left it', async () => {
    // A service row as the restservices API stores one (its delivery is not what is tested here).
    await db().query(`INSERT INTO rest_services (form_id, name, service_url, events) VALUES ($1, 'generic_json', 'https://hooks.example.org/e', $2)`,
      [registrationPk, ['created', 'entity_created', 'entity_updated']]);
    try {
      const id = randomUUID();
      await submit(registrationInstance({ instanceId: randomUUID(), entityId: id, species: 'lime', circumference: '7' })).expect(201);
      await submit(followUpInstance({ instanceId: randomUUID(), entityId: id, baseVersion: '1', health: 'fine' })).expect(201);
      expect(outcomes.map((o) => [o.created !== null, o.queued > 0])).toEqual([[true, true], [true, true]]);
      const entity = await entityByUuid(id);
      const rows = (await db().query(
        `SELECT d.event, d.snapshot FROM rest_deliveries d WHERE d.entity_id = $1 ORDER BY d.id`, [entity.id],
      )) as Array<{ event: string; snapshot: { list: string; entity: Record<string, unknown> } }>;
      expect(rows.map((r) => [r.event, r.snapshot.list, r.snapshot.entity.version, r.snapshot.entity.label, r.snapshot.entity.data])).toEqual([
        ['entity_created', 'trees', 1, 'lime 7', { species: 'lime', circumference_cm: '7' }],
        ['entity_updated', 'trees', 2, 'lime 7', { species: 'lime', circumference_cm: '7', health_status: 'fine' }],
      ]);
      expect(rows[0]!.snapshot.entity).toMatchObject({ id: entity.id, uuid: id, conflict: null, creator_submission_id: expect.any(Number), deleted_at: null });
    } finally {
      await db().query(`DELETE FROM rest_services WHERE service_url = 'https://hooks.example.org/e'`);
    }
  });
});
