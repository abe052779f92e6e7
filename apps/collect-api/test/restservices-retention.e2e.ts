import request from 'supertest';
import { DataSource } from 'typeorm';
import { waitFor } from '@collect/testing';
import { DeliveryLogPruner } from '../src/restservices/delivery/delivery-log-pruner.js';
import { RestServicesRepository } from '../src/restservices/restservices.repository.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** FORWARD_LOG_RETENTION_DAYS: finished deliveries past retention go, with their attempts; nothing open does. */
describe('rest services: delivery-log retention', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let db: DataSource;
  let serviceId: number;
  let submissionId: number;

  async function delivery(status: string, ageDays: number): Promise<number> {
    const [{ id }] = await db.query(
      `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, attempts, date_modified)
       VALUES (gen_random_uuid(), $1, $2, 'created', $3, 1, now() - make_interval(days => $4)) RETURNING id`,
      [serviceId, submissionId, status, ageDays],
    );
    await db.query(
      `INSERT INTO rest_delivery_attempts (delivery_row_id, service_id, attempt, status, status_code, latency_ms, event, created_at)
       VALUES ($1, $2, 1, $3, 200, 5, 'created', now() - make_interval(days => $4))`,
      [id, serviceId, status === 'pending' || status === 'queued' ? 'retrying' : status, ageDays],
    );
    return Number(id);
  }

  const remaining = async (): Promise<number[]> => (await db.query(`SELECT id FROM rest_deliveries WHERE service_id = $1 ORDER BY id`, [serviceId])).map((r: { id: string }) => Number(r.id));
  const attemptsOf = async (ids: number[]): Promise<number> => Number((await db.query(`SELECT count(*) AS n FROM rest_delivery_attempts WHERE delivery_row_id = ANY($1)`, [ids]))[0].n);

  beforeAll(async () => {
    // No in-process worker (no pruner timer): the test runs a pruner of its own.
    sut = await startTestCollectApp({ FORWARD_LOG_RETENTION_DAYS: '30' });
    db = sut.app.get(DataSource);
    owner = await createTestUser(sut.app);
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('retention_form')), 'form.xml').expect(201)).body.formid;
    serviceId = (await request(sut.url).post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: 'http://127.0.0.1:9/hook' }).expect(201)).body.id;
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'retention_form', submission: { name: 'x' } }).expect(201);
    submissionId = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body[0]._id;
    await db.query(`DELETE FROM rest_deliveries WHERE service_id = $1`, [serviceId]);
  });
  afterAll(() => sut?.close());

  it('deletes finished deliveries older than the retention with their attempts, and keeps open and recent ones', async () => {
    const old = await Promise.all(['success', 'failed', 'skipped'].map((s) => delivery(s, 40)));
    const kept = [await delivery('success', 10), await delivery('failed', 29), await delivery('pending', 40), await delivery('retrying', 40), await delivery('queued', 40)];

    expect(await new DeliveryLogPruner(sut.app.get(RestServicesRepository), sut.config).pruneOnce()).toBe(3);

    expect(await remaining()).toEqual(kept);
    expect(await attemptsOf(old)).toBe(0);
    expect(await attemptsOf(kept)).toBe(kept.length);
    const log = (await request(sut.url).get(`/api/v1/restservices/${serviceId}/deliveries`).set('Authorization', owner.token).expect(200)).body as Array<{ status: string }>;
    expect(log).toHaveLength(kept.length);
    // A second run finds nothing more.
    expect(await new DeliveryLogPruner(sut.app.get(RestServicesRepository), sut.config).pruneOnce()).toBe(0);
    await db.query(`DELETE FROM rest_deliveries WHERE service_id = $1`, [serviceId]);
  });

  it('works through a large backlog in batches', async () => {
    await db.query(
      `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, attempts, date_modified)
       SELECT gen_random_uuid(), $1, $2, 'created', 'success', 1, now() - make_interval(days => 31) - make_interval(secs => g) FROM generate_series(1, 12001) g`,
      [serviceId, submissionId],
    );
    const fresh = await delivery('success', 1);
    expect(await new DeliveryLogPruner(sut.app.get(RestServicesRepository), sut.config).pruneOnce()).toBe(12_001);
    expect(await remaining()).toEqual([fresh]);
  });

  it('FORWARD_LOG_RETENTION_DAYS=0 keeps everything', async () => {
    const ancient = await delivery('success', 3_000);
    const keepForever = new DeliveryLogPruner(sut.app.get(RestServicesRepository), { ...sut.config, FORWARD_LOG_RETENTION_DAYS: 0 });
    expect(await keepForever.pruneOnce()).toBe(0);
    expect(await remaining()).toContain(ancient);
  });
});

describe('rest services: the worker prunes on its own schedule', () => {
  let sut: TestCollectApp;
  afterAll(() => sut?.close());

  it('runs the clean-up by timer, again and again', async () => {
    sut = await startTestCollectApp({ FORWARD_LOG_RETENTION_DAYS: '30', FORWARD_LOG_PRUNE_INTERVAL_MS: '1000' }, { worker: true });
    const db = sut.app.get(DataSource);
    const owner = await createTestUser(sut.app);
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('retention_timer')), 'form.xml').expect(201)).body.formid;
    const serviceId = (await request(sut.url).post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: 'http://127.0.0.1:9/hook' }).expect(201)).body.id;
    const oldRow = async () =>
      Number((await db.query(`INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, attempts, date_modified) VALUES (gen_random_uuid(), $1, 1, 'created', 'success', 1, now() - interval '40 days') RETURNING id`, [serviceId]))[0].id);
    const gone = (id: number) => async () => (await db.query(`SELECT 1 FROM rest_deliveries WHERE id = $1`, [id])).length === 0;
    await waitFor(gone(await oldRow()), 10_000, 'the first scheduled clean-up');
    await waitFor(gone(await oldRow()), 10_000, 'a later scheduled clean-up');
  });
});

