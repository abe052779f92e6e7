import type pg from 'pg';
import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { busyConnections, eventually, watcher } from './slow-readers.js';

/**
 * Filtered and sorted reads (docs/security.md, "Streamed reads and heavy queries"): a statement
 * timeout (503 with a message), at most READS_PER_USER at once per user (429) and READ_POOL_SIZE
 * in all (503), on a pool apart from the one every other request uses. The reads are held back
 * by a lock the test takes on `submissions`, so what is counted does not depend on speed.
 */
describe('heavy reads: bounded in time, per user and in their share of connections', () => {
  const waiters = async (db: pg.Client) => (await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
  )).rows[0]!.n;

  async function setUp(env: Record<string, string>) {
    const sut = await startTestCollectApp(env);
    const owner = await createTestUser(sut.app);
    const users = await Promise.all([0, 1, 2].map(() => createTestUser(sut.app)));
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: `heavy_${process.pid}`, fields: [{ name: 'n', type: 'integer' }] }).expect(201)).body.formid as number;
    for (const u of users) await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: u.username, role: 'readonly' }).expect(204);
    for (let i = 0; i < 3; i++) await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: `heavy_${process.pid}`, submission: { n: String(i) } }).expect(201);
    const db = await watcher(sut.config.DATABASE_URL);
    // Thirty-two conditions, as a hostile reader would send them.
    const query = encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [i ? `n${i}` : 'n', { $ne: String(1000 + i) }]))));
    const read = (u: TestUser) => request(sut.url).get(`/api/v1/data/${formId}?query=${query}&sort=${encodeURIComponent('{"n":-1}')}`).set('Authorization', u.token).timeout(60_000);
    return { sut, users, db, read };
  }

  it('a read longer than READ_STATEMENT_TIMEOUT_MS: 503 with a message naming the variable', async () => {
    const { sut, users, db, read } = await setUp({ READ_STATEMENT_TIMEOUT_MS: '1000' });
    try {
      await db.query('BEGIN');
      await db.query('LOCK TABLE submissions IN ACCESS EXCLUSIVE MODE');
      const res = await read(users[0]!).timeout(20_000);
      expect(res.status).toBe(503);
      expect(res.body.detail).toContain('READ_STATEMENT_TIMEOUT_MS');
      await db.query('ROLLBACK');
      expect((await read(users[0]!)).status).toBe(200);
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
      await sut.close();
    }
  }, 120_000);

  it('READS_PER_USER at once per user (429), READ_POOL_SIZE in all (503); readiness keeps its connection', async () => {
    const { sut, users, db, read } = await setUp({ READ_POOL_SIZE: '3', READS_PER_USER: '2', DATABASE_POOL_SIZE: '3' });
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    try {
      await db.query('BEGIN');
      await db.query('LOCK TABLE submissions IN ACCESS EXCLUSIVE MODE');
      const held = [read(a), read(a)].map((r) => r.then((x) => x));
      const w = await eventually(() => waiters(db), (n) => n === 2, 10_000);
      if (w !== 2) console.log('DBG', (await db.query(`SELECT application_name, state, wait_event_type, left(query, 60) q FROM pg_stat_activity WHERE datname = current_database()`)).rows, await Promise.race([Promise.all(held).then((r) => r.map((x) => [x.status, x.text.slice(0, 200)])), new Promise((r) => setTimeout(() => r('pending'), 3000))]));
      expect(w).toBe(2);
      const third = await read(a);
      expect(third.status).toBe(429);
      expect(third.body.detail).toContain('READS_PER_USER');
      held.push(read(b).then((x) => x));
      expect(await eventually(() => waiters(db), (n) => n === 3)).toBe(3);
      const full = await read(c);
      expect(full.status).toBe(503);
      expect(full.body.detail).toContain('READ_POOL_SIZE');
      const busy = await busyConnections(db);
      expect(busy).toEqual({ total: 3, reads: 3 });
      expect((await request(sut.url).get('/health/ready').timeout(20_000)).status).toBe(200);
      await db.query('ROLLBACK');
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
      expect((await read(c)).status).toBe(200);
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
      await sut.close();
    }
  }, 120_000);
});
