import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { registrationSubmission, registrationXForm } from './entity-forms.js';
import { FAST_FORWARDING, until, type ReceivedRequest } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';
import type { TestCollectApp } from './test-app.js';
import type { Receiver } from './restservices-receiver.js';
import type { TestUser } from './test-users.js';

/**
 * Entity events to rest services (docs/entities.md, "Entity events to rest services"):
 * `entity_created`, `entity_updated`, `entity_deleted` go through the same outbox and worker as
 * submission events: a real receiver on 127.0.0.1 gets the entity object plus `"list"`, with the
 * event in `X-Submission-Event`; the events of one entity arrive in order across retries; only
 * services whose form uses the list, and only generic_json, take them.
 */
describe('entity events reach rest services through the outbox', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;
  let formId: number;
  let listId: number;

  withWorkerAppAndReceiver({ ...FAST_FORWARDING, FORWARD_MAX_ATTEMPTS: '10' }, async (suite) => {
    ({ sut, owner, rx } = suite);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(registrationXForm('event_trees', 'event_trees')), 'form.xml').expect(201)).body.formid;
    const [row] = (await sut.app.get(DataSource).query(`SELECT id FROM entity_lists WHERE owner_id = $1 AND name = 'event_trees'`, [owner.id])) as Array<{ id: number }>;
    listId = row.id;
  });

  const api = () => request(sut.url);
  const auth = () => ({ Authorization: owner.token });
  const service = async (path: string, events: string[], xform = formId) =>
    (await api().post('/api/v1/restservices').set(auth()).send({ xform, name: 'generic_json', service_url: `${rx.url}${path}`, events }).expect(201)).body as { id: number };
  /** One entity made through the API (the bulk form, one item); its id and uuid. */
  const createEntity = async (label: string, data: Record<string, string>) => {
    const uuid = randomUUID();
    await api().post(`/api/v2/entity-lists/${listId}/entities`).set(auth()).send({ entities: [{ uuid, label, data }] }).expect(201);
    const [row] = (await sut.app.get(DataSource).query(`SELECT id::float8 AS id FROM entities WHERE uuid = $1`, [uuid])) as Array<{ id: number }>;
    return { id: row.id, uuid };
  };
  const bodyOf = (r: ReceivedRequest) => JSON.parse(r.body.toString()) as Record<string, unknown>;
  const ok = (path: string) => rx.to(path).filter((r) => r.headers['x-delivery-attempt'] !== undefined);

  it('create, update and delete through the API: each event with the entity object and the list', async () => {
    await service('/all', ['entity_created', 'entity_updated', 'entity_deleted']);
    await service('/created-only', ['entity_created']);
    await service('/submissions-only', ['created']);
    const made = await createEntity('Oak', { species: 'Oak', circumference_cm: '40' });
    await api().patch(`/api/v2/entity-lists/${listId}/entities/${made.id}`).set(auth()).send({ data: { circumference_cm: '42' } }).expect(200);
    const current = (await api().get(`/api/v2/entity-lists/${listId}/entities/${made.id}`).set(auth()).expect(200)).body as Record<string, unknown>;
    await api().delete(`/api/v2/entity-lists/${listId}/entities/${made.id}`).set(auth()).expect(204);

    const got = await until('three entity events', () => (rx.to('/all').length >= 3 ? rx.to('/all') : false));
    expect(got.map((r) => r.headers['x-submission-event'])).toEqual(['entity_created', 'entity_updated', 'entity_deleted']);
    expect(got.map((r) => r.headers['content-type'])).toEqual(Array(3).fill('application/json'));
    const [created, updated, deleted] = got.map(bodyOf);
    expect(created).toMatchObject({ id: made.id, uuid: made.uuid, version: 1, list: 'event_trees', data: { species: 'Oak', circumference_cm: '40', label: 'Oak' } });
    // The update's body is the entity object the API answers, plus the list's name.
    expect(updated).toEqual({ ...current, list: 'event_trees' });
    expect(deleted).toMatchObject({ id: made.id, version: 2, list: 'event_trees', deleted_at: expect.any(String) });
    expect(new Set(got.map((r) => r.headers['x-delivery-id'])).size).toBe(3);
    await until('the created-only event', () => rx.to('/created-only').length === 1);
    expect(rx.to('/created-only')[0].headers['x-submission-event']).toBe('entity_created');
    // A service of the form that takes submission events only gets none of these.
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.to('/submissions-only')).toEqual([]);
    expect(ok('/all')).toHaveLength(3);
  });

  it('a registration submission raises entity_created beside the submission event, in the same outbox', async () => {
    await service('/intake', ['created', 'entity_created']);
    const uuid = randomUUID();
    await api().post('/submission').set(auth()).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(registrationSubmission({ uuid, species: 'Ash', circumference: 12, instanceId: randomUUID(), idString: 'event_trees' }).replace('dataset="trees"', 'dataset="event_trees"')), 'submission.xml')
      .expect(201);
    const got = await until('both events', () => (rx.to('/intake').length >= 2 ? rx.to('/intake') : false));
    const entity = got.find((r) => r.headers['x-submission-event'] === 'entity_created')!;
    expect(bodyOf(entity)).toMatchObject({ uuid, version: 1, list: 'event_trees', creator_submission: expect.any(Number), data: { species: 'Ash', circumference_cm: '12' } });
    expect(got.map((r) => r.headers['x-submission-event']).sort()).toEqual(['created', 'entity_created']);
  });

  it('the events of one entity arrive in order while the first is retried', async () => {
    await service('/ordered', ['entity_created', 'entity_updated']);
    rx.script('/ordered', [{ status: 503 }, { status: 500 }, { status: 200 }]);
    const made = await createEntity('Elm', { species: 'Elm' });
    for (const c of ['1', '2', '3']) await api().patch(`/api/v2/entity-lists/${listId}/entities/${made.id}`).set(auth()).send({ data: { circumference_cm: c } }).expect(200);
    const got = await until('six attempts', () => (rx.to('/ordered').length >= 6 ? rx.to('/ordered') : false), 30_000);
    // Three attempts of the created event (the first two refused), then the updates in their order.
    expect(got.map((r) => [r.headers['x-submission-event'], r.headers['x-delivery-attempt']])).toEqual([
      ['entity_created', '1'], ['entity_created', '2'], ['entity_created', '3'], ['entity_updated', '1'], ['entity_updated', '1'], ['entity_updated', '1'],
    ]);
    // Every attempt of a delivery sends the same bytes under the same id.
    expect(new Set(got.slice(0, 3).map((r) => r.body.toString())).size).toBe(1);
    expect(new Set(got.slice(0, 3).map((r) => r.headers['x-delivery-id'])).size).toBe(1);
    expect(got.slice(3).map((r) => (bodyOf(r).data as Record<string, string>).circumference_cm)).toEqual(['1', '2', '3']);
    const rows = (await sut.app.get(DataSource).query(`SELECT event, status, submission_id FROM rest_deliveries WHERE entity_id = $1 AND service_id = (SELECT id FROM rest_services WHERE service_url = $2) ORDER BY id`, [made.id, `${rx.url}/ordered`])) as Array<Record<string, unknown>>;
    await until('rows finished', async () => ((await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM rest_deliveries WHERE entity_id = $1 AND status <> 'success'`, [made.id])) as Array<{ n: number }>)[0].n === 0);
    expect(rows.map((r) => r.submission_id)).toEqual([null, null, null, null]);
  });

  it('a replay sends each live entity of the form\'s lists as entity_created at its current version, after the submissions', async () => {
    const idString = 'replay_trees';
    const form = (await api().post('/api/v1/forms').set(auth()).attach('xml_file', Buffer.from(registrationXForm(idString, idString)), 'form.xml').expect(201)).body.formid as number;
    const db = sut.app.get(DataSource);
    const register = async (species: string) => {
      const uuid = randomUUID();
      const instanceId = randomUUID();
      await api().post('/submission').set(auth()).set('X-OpenRosa-Version', '1.0')
        .attach('xml_submission_file', Buffer.from(registrationSubmission({ uuid, species, circumference: 10, instanceId, idString }).replace('dataset="trees"', `dataset="${idString}"`)), 'submission.xml')
        .expect(201);
      const [row] = (await db.query(`SELECT e.id::float8 AS id, e.list_id, e.creator_submission_id AS submission FROM entities e WHERE e.uuid = $1`, [uuid])) as Array<{ id: number; list_id: number; submission: number }>;
      return { uuid, ...row };
    };
    const [ash, oak, yew] = [await register('Ash'), await register('Oak'), await register('Yew')];
    await api().patch(`/api/v2/entity-lists/${oak.list_id}/entities/${oak.id}`).set(auth()).send({ data: { circumference_cm: '55' } }).expect(200);
    await api().delete(`/api/v2/entity-lists/${yew.list_id}/entities/${yew.id}`).set(auth()).expect(204);

    // A service added afterwards gets nothing of the past until a replay.
    const late = await service('/replay-entities', ['entity_created'], form);
    const replay = (id: number, body: Record<string, unknown>, status: number) =>
      api().post(`/api/v1/restservices/${id}/replay`).set(auth()).send(body).expect(status).then((r) => r.body as { id: number; total: number; count: number });
    expect((await replay(late.id, { dry_run: true }, 200)).count).toBe(2);
    const started = await replay(late.id, {}, 202);
    expect(started.total).toBe(2);
    const got = await until('two replayed entities', () => (rx.to('/replay-entities').length >= 2 ? rx.to('/replay-entities') : false));
    expect(got.map((r) => r.headers['x-submission-event'])).toEqual(['entity_created', 'entity_created']);
    // (Rows of different entities may be sent side by side: their order of arrival is not fixed.)
    const bodies = new Map(got.map(bodyOf).map((b) => [b.uuid, b]));
    expect([...bodies.keys()].sort()).toEqual([ash.uuid, oak.uuid].sort()); // the deleted one is not sent
    expect(bodies.get(oak.uuid)).toMatchObject({ version: 2, list: idString, data: { species: 'Oak', circumference_cm: '55' } });
    expect(bodies.get(ash.uuid)).toMatchObject({ version: 1, list: idString, creator_submission: ash.submission });
    await until('the replay done', async () => {
      const r = (await api().get(`/api/v1/restservices/${late.id}/replays/${started.id}`).set(auth()).expect(200)).body as { status: string; done: number };
      return r.status === 'done' && r.done === 2;
    });

    // Submissions and entities, narrowed to one submission: that submission and the entity it made.
    const both = await service('/replay-both', ['created', 'entity_created'], form);
    expect((await replay(both.id, { submission_ids: [ash.submission] }, 202)).total).toBe(2);
    const pair = await until('the submission and its entity', () => (rx.to('/replay-both').length >= 2 ? rx.to('/replay-both') : false));
    const byEvent = new Map(pair.map((r) => [r.headers['x-submission-event'], bodyOf(r)]));
    expect([...byEvent.keys()].sort()).toEqual(['created', 'entity_created']);
    expect(byEvent.get('entity_created')).toMatchObject({ uuid: ash.uuid });
    expect(byEvent.get('created')).toMatchObject({ _id: ash.submission });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.to('/replay-both')).toHaveLength(2);

    // only_failed: the entities whose delivery to this service failed for good (a 400) and never succeeded.
    const refusing = await service('/replay-failed', ['entity_created'], form);
    rx.script('/replay-failed', [{ status: 400 }]);
    const elm = await register('Elm');
    const failed = async () => ((await db.query(`SELECT count(*)::int AS n FROM rest_deliveries WHERE service_id = $1 AND entity_id = $2 AND status = 'failed'`, [refusing.id, elm.id])) as Array<{ n: number }>)[0]!.n;
    await until('the refused delivery failed', async () => (await failed()) === 1);
    expect((await replay(refusing.id, { only_failed: true, dry_run: true }, 200)).count).toBe(1);
    expect((await replay(refusing.id, { only_failed: true }, 202)).total).toBe(1);
    const resent = await until('the failed entity sent again', () => (rx.to('/replay-failed').length >= 2 ? rx.to('/replay-failed') : false));
    expect(resent.map((r) => bodyOf(r).uuid)).toEqual([elm.uuid, elm.uuid]);
    expect(resent.map((r) => r.headers['x-submission-event'])).toEqual(['entity_created', 'entity_created']);
  });

  it('only services of a form that uses the list get its events; only generic_json may take them', async () => {
    const other = (await api().post('/api/v1/forms').set(auth()).attach('xml_file', Buffer.from(registrationXForm('other_form', 'other_list')), 'form.xml').expect(201)).body.formid as number;
    await service('/other-form', ['entity_created'], other);
    await createEntity('Fir', {});
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.to('/other-form')).toEqual([]);
    const refused = await api().post('/api/v1/restservices').set(auth()).send({ xform: formId, name: 'generic_xml', service_url: `${rx.url}/xml`, events: ['entity_created'] }).expect(400);
    expect(refused.body).toEqual({ events: ['Entity events (entity_created, entity_updated, entity_deleted) go to generic_json services only.'] });
    const bad = await api().post('/api/v1/restservices').set(auth()).send({ xform: formId, name: 'generic_json', service_url: `${rx.url}/x`, events: ['entity_changed'] }).expect(400);
    expect(bad.body).toEqual({ events: ['One of created, updated, deleted, entity_created, entity_updated, entity_deleted.'] });
  });
});
