import pg from 'pg';
import request from 'supertest';
import { DataSource, type QueryRunner } from 'typeorm';
import { ATTEMPT_WRITE_SQL, CLAIM_PLANNER, CLAIM_SQL } from '../src/restservices/delivery/delivery-statements.js';
import { RestServicesRepository, type AttemptRecord } from '../src/restservices/restservices.repository.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser } from './test-users.js';

/**
 * The worker's attempt write is a named prepared statement (RestServicesRepository.prepared):
 * each connection keeps the generic plan it made on its first calls. A plan made while
 * rest_deliveries was small must not read the whole table once it has grown
 * (docs/restservices.md, "Connections and batches (the worker's hot path)").
 */
describe('rest services: the attempt write keeps an index plan as rest_deliveries grows', () => {
  let sut: TestCollectApp;
  let db: DataSource;
  let runner: QueryRunner;
  let serviceId: number;
  let submissionId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    db = sut.app.get(DataSource);
    const owner = await createTestUser(sut.app);
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('plans_form')), 'form.xml').expect(201)).body.formid;
    serviceId = (await request(sut.url).post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: 'http://127.0.0.1:9/hook' }).expect(201)).body.id;
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'plans_form', submission: { name: 'x' } }).expect(201);
    submissionId = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body[0]._id;
    runner = db.createQueryRunner();
    await runner.connect();
  });
  afterAll(async () => {
    await runner?.release();
    await sut?.close();
  });

  const insertRows = async (count: number): Promise<number[]> =>
    ((await runner.query(
      `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, attempts, next_attempt_at, lease_until)
       SELECT gen_random_uuid(), $1, $2, 'created', 'pending', 1, now(), now() + interval '1 hour' FROM generate_series(1, $3) RETURNING id`,
      [serviceId, submissionId, count],
    )) as Array<{ id: string }>).map((r) => Number(r.id));

  /** The plan the connection uses for a call of `ids` (EXPLAIN EXECUTE takes no bind parameters: array literals). */
  const plan = async (ids: number[]): Promise<string> => {
    const of = (value: string | number) => `'{${ids.map(() => value).join(',')}}'`;
    const rows = (await runner.query(
      `EXPLAIN EXECUTE attempt_write('{${ids.join(',')}}', ${of(serviceId)}, ${of(1)}, ${of('success')}, ${of(200)}, ${of(3)}, ${of('NULL')}, ${of('ok')}, ${of('created')}, ${of('NULL')})`,
    )) as Array<{ 'QUERY PLAN': string }>;
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  };

  it('moves the rows through the primary key, with the generic plan made on a small table', async () => {
    await runner.query(`SET plan_cache_mode = force_generic_plan`);
    await runner.query(`PREPARE attempt_write AS ${ATTEMPT_WRITE_SQL}`);
    // Planned now, on a table of a few rows; the plan is kept for every later call.
    const small = await plan(await insertRows(4));
    expect(small).not.toMatch(/Seq Scan on rest_deliveries/);
    expect(small).toMatch(/Index Scan (using|on) rest_deliveries_pkey/);
    await insertRows(20_000);
    const grown = await plan(await insertRows(4));
    expect(grown).not.toMatch(/Seq Scan on rest_deliveries/);
    expect(grown).toMatch(/Index Scan (using|on) rest_deliveries_pkey/);
  });

  // The log has no foreign key to rest_deliveries (migration 1764920000200): the write itself
  // keeps entries of deleted deliveries out, and a delete takes the entries with it.
  it('logs no attempt of a delivery deleted before the write, the batch\'s others are logged, and deleting deliveries deletes their entries', async () => {
    const [kept, gone] = await insertRows(2);
    await runner.query(`DELETE FROM rest_deliveries WHERE id = $1`, [gone]);
    const entry = (id: number): AttemptRecord => ({
      deliveryRowId: id, serviceId, attempt: 1, status: 'success', statusCode: 200, latencyMs: 3, error: null, responseExcerpt: 'ok', event: 'created', retryAt: null,
    });
    await sut.app.get(RestServicesRepository).recordAttempts([entry(kept), entry(gone)]);
    const logged = async () => ((await runner.query(
      `SELECT delivery_row_id::int AS id FROM rest_delivery_attempts WHERE delivery_row_id = ANY($1::bigint[]) ORDER BY id`, [[kept, gone]],
    )) as Array<{ id: number }>).map((r) => r.id);
    expect(await logged()).toEqual([kept]);
    expect((await runner.query(`SELECT status FROM rest_deliveries WHERE id = $1`, [kept]))[0].status).toBe('success');
    await runner.query(`DELETE FROM rest_deliveries WHERE id = $1`, [kept]);
    expect(await logged()).toEqual([]);
  });

  // Every version of a delivery row (outbox insert, claim, attempt write) takes an entry in each
  // of the table's indexes: an index on the random `delivery_id`, which no query reads, was the
  // costliest of them (migration 1764930000000; docs/restservices.md, "Connections and
  // batches (the worker's hot path)").
  it('keeps no index on delivery_id', async () => {
    const rows = (await runner.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'rest_deliveries'`)) as Array<{ indexname: string; indexdef: string }>;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => /\bdelivery_id\b/.test(r.indexdef)).map((r) => r.indexname)).toEqual([]);
  });

  // The claim changes no indexed column (status, next_attempt_at and date_modified stay; the
  // lease is `lease_until`), so a row whose page has room is updated in place, with no new index
  // entry; new pages keep a fifth free for it (fillfactor 80, migration 1764940000000;
  // docs/restservices.md, "Connections and batches (the worker's hot path)").
  it('claims rows in place: a heap-only update of each, none again while its lease runs', async () => {
    await runner.query(`DELETE FROM rest_deliveries`);
    const [{ reloptions }] = (await runner.query(`SELECT reloptions FROM pg_class WHERE oid = 'rest_deliveries'::regclass`)) as Array<{ reloptions: string[] }>;
    expect(reloptions).toContain('fillfactor=80');
    // Four rows the size of the bench's (a snapshot of about 600 bytes) on a new page, one
    // submission each (no row waits for an earlier event), as the relay finds them just written.
    await runner.query(
      `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, next_attempt_at, snapshot)
       SELECT gen_random_uuid(), $1, $2 + g, 'created', 'pending', now() - make_interval(secs => 100 - g), jsonb_build_object('pad', repeat(md5(g::text), 18))
       FROM generate_series(1, 4) g`,
      [serviceId, submissionId],
    );
    const claim = async () => ((await runner.query(CLAIM_SQL, [10, '60000', 8])) as [unknown[], number])[0];
    await runner.startTransaction();
    try {
      expect(await claim()).toHaveLength(4);
      const [counts] = (await runner.query(
        `SELECT pg_stat_get_xact_tuples_updated('rest_deliveries'::regclass)::int AS updated, pg_stat_get_xact_tuples_hot_updated('rest_deliveries'::regclass)::int AS hot`,
      )) as Array<{ updated: number; hot: number }>;
      expect(counts).toEqual({ updated: 4, hot: 4 });
      // Leased: not claimable again until the lease has passed (a worker killed mid-send).
      expect(await claim()).toHaveLength(0);
      await runner.query(`UPDATE rest_deliveries SET lease_until = now() - interval '1 second'`);
      expect(await claim()).toHaveLength(4);
    } finally {
      await runner.rollbackTransaction();
    }
  });

  // The worker claims on a connection whose planner has only the plan the claim was written for
  // (CLAIM_PLANNER): a generic plan made on a small table read the open index as a bitmap, every
  // dead entry of it on every claim, and sorted (docs/restservices.md, "Connections
  // and batches (the worker's hot path)").
  it('claims through the open index in order and locks by primary key, in the generic plan made on a small table', async () => {
    await runner.query(`DELETE FROM rest_deliveries`);
    const client = new pg.Client({ connectionString: (db.options as { url?: string }).url, options: CLAIM_PLANNER });
    await client.connect();
    try {
      await client.query(`SET plan_cache_mode = force_generic_plan`);
      await client.query(`PREPARE claim(int, text, int) AS ${CLAIM_SQL}`);
      const plan = ((await client.query(`EXPLAIN EXECUTE claim(10, '60000', 8)`)).rows as Array<{ 'QUERY PLAN': string }>).map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using rest_deliveries_open_idx on rest_deliveries/);
      expect(plan).toMatch(/Index Scan using rest_deliveries_pkey on rest_deliveries c\b/);
      expect(plan).not.toMatch(/Bitmap|Sort|Seq Scan on rest_deliveries/);
    } finally {
      await client.end();
    }
  });
});
