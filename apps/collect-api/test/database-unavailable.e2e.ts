import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource, type QueryRunner } from 'typeorm';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * When the database cannot do the work at that moment, a request is answered 503 with
 * Retry-After, never 500, and nothing of it is stored; a deadlock the intake statement loses is
 * run again before anyone is answered; a request waits for a pooled connection at most
 * DATABASE_POOL_WAIT_MS (docs/api-conventions.md, "Errors"). Real PostgreSQL: a
 * second session holds the form's row, so the intake statement waits on the foreign key to it,
 * and then either has its backend terminated or is drawn into a real deadlock.
 */
describe('database unavailable: 503 and a retried deadlock, never a 500', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let ds: DataSource;
  let formId: number;
  const idString = `db_busy_${process.pid}`;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    ds = sut.app.get(DataSource);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid;
  });
  afterAll(async () => {
    await sut?.close();
  });

  const submit = (uuid: string) =>
    request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).timeout(30_000).send({ id: idString, submission: { name: 'held', 'meta/instanceID': `uuid:${uuid}` } });
  /** The backends of this database waiting on a lock (the intake statement behind the holder). */
  const lockWaiters = async () =>
    ((await ds.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)) as Array<{ pid: number }>).map((r) => r.pid);
  const until = async <T>(what: string, get: () => Promise<T | false>): Promise<T> => {
    for (const started = Date.now(); ; ) {
      const value = await get();
      if (value !== false) return value;
      if (Date.now() - started > 20_000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const storedUuids = async () => ((await ds.query(`SELECT uuid FROM submissions WHERE form_id = $1`, [formId])) as Array<{ uuid: string }>).map((r) => r.uuid);
  /** A session holding the form's row FOR UPDATE: a new submission's foreign key check waits for it. */
  const holdForm = async (): Promise<QueryRunner> => {
    const holder = ds.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT id FROM forms WHERE id = $1 FOR UPDATE`, [formId]);
    return holder;
  };

  it('a statement whose connection is terminated under it answers 503 with Retry-After; sent again, it is stored once', async () => {
    const uuid = randomUUID();
    const holder = await holdForm();
    try {
      const answer = submit(uuid).then((r) => r);
      const [pid] = await until('the intake to wait on the form row', async () => (await lockWaiters()).length >= 1 && lockWaiters());
      await holder.query(`SELECT pg_terminate_backend($1)`, [pid]);
      const res = await answer;
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toMatchObject({ detail: 'The database is busy; try again shortly.' });
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect(await storedUuids()).not.toContain(uuid);
    await submit(uuid).expect(201);
    expect((await storedUuids()).filter((u) => u === uuid)).toHaveLength(1);
  });

  it('a request that finds every pooled connection taken past DATABASE_POOL_WAIT_MS answers 503, and is stored when sent again', async () => {
    const small = await startTestCollectApp({ DATABASE_POOL_SIZE: '1', DATABASE_POOL_WAIT_MS: '300' });
    try {
      const user = await createTestUser(small.app);
      const id = `pool_wait_${process.pid}`;
      await request(small.url).post('/api/v1/forms').set('Authorization', user.token).attach('xml_file', Buffer.from(demoXForm(id)), 'form.xml').expect(201);
      const send = (uuid: string) => request(small.url).post('/api/v1/submissions').set('Authorization', user.token).timeout(30_000).send({ id, submission: { name: 'pool', 'meta/instanceID': `uuid:${uuid}` } });
      const uuid = randomUUID();
      // The pool's only connection, held.
      const holder = small.app.get(DataSource).createQueryRunner();
      await holder.connect();
      try {
        const res = await send(uuid);
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('1');
      } finally {
        await holder.release();
      }
      await send(uuid).expect(201);
    } finally {
      await small.close();
    }
  });

  it('a deadlock the intake statement loses is run again: 201, stored once', async () => {
    const uuid = randomUUID();
    const holder = await holdForm();
    // The holder's own deadlock check comes long after the intake's (1 s, the default), so the
    // intake statement is the one PostgreSQL aborts.
    await holder.query(`SET LOCAL deadlock_timeout = '60s'`);
    try {
      let answered = false;
      const answer = submit(uuid).then((r) => ((answered = true), r));
      await until('the intake to wait on the form row', async () => (await lockWaiters()).length >= 1);
      // The intake holds its new row's unique entry and waits for the form row; inserting the same
      // instance here waits for the intake: a cycle, which PostgreSQL breaks by aborting the intake's statement.
      await holder.query(
        `INSERT INTO submissions (form_id, uuid, json, xml, content_hash) VALUES ($1, $2, '{}', '<data/>', 'held')`,
        [formId, uuid],
      );
      // The intake's second run now waits for this transaction's row: rolled back, the row is the intake's.
      // (Answered instead: it was not run again, and the status below says what it got.)
      await until('the intake to run again and wait', async () => answered || (await lockWaiters()).length >= 1);
      await holder.rollbackTransaction();
      const res = await answer;
      expect(res.status).toBe(201);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    const rows = (await ds.query(`SELECT uuid, content_hash FROM submissions WHERE form_id = $1 AND uuid = $2`, [formId, uuid])) as Array<{ content_hash: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.content_hash).not.toBe('held');
  });
});
