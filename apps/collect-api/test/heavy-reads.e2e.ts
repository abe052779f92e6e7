import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { watcher } from './slow-readers.js';

/**
 * Filtered and sorted reads (docs/security.md, "Streamed reads and heavy queries") run on the
 * read pool, whose statement timeout ends them with a 503 and a message. The read is held back
 * by a lock the test takes on `submissions`, so the outcome does not depend on speed.
 */
describe('heavy reads: bounded in time', () => {
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
});
