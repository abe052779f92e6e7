import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Per-user quotas of asynchronous exports (docs/exports.md, "Quotas"). No worker runs here, so
 * every export asked for stays `pending`: what counts is what the API lets one user queue.
 */
describe('exports: per-user quotas of asynchronous exports', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let formId: number;
  const OPEN = 2;
  const ask = (user: TestUser, body: Record<string, unknown>) => request(sut.url).post('/api/v1/export').set('Authorization', user.token).send({ xform: formId, ...body });

  beforeAll(async () => {
    sut = await startTestCollectApp({ EXPORT_OPEN_PER_USER: String(OPEN), EXPORT_STORAGE_QUOTA_BYTES: '1000' });
    owner = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: `quota_${process.pid}`, fields: [{ name: 'n', type: 'text' }] }).expect(201)).body.formid;
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
  });
  afterAll(() => sut?.close());

  it('the same pending export asked for again is merged; past EXPORT_OPEN_PER_USER open exports: 429 naming the variable; others are not affected', async () => {
    const first = await ask(reader, { format: 'csv' }).expect(202);
    const again = await Promise.all(Array.from({ length: 5 }, () => ask(reader, { format: 'csv' })));
    expect(again.map((r) => [r.status, r.body.id])).toEqual(Array(5).fill([202, first.body.id]));
    await ask(reader, { format: 'xlsx' }).expect(202);
    const over = await ask(reader, { format: 'csv', include_labels: true }).expect(429);
    expect(over.body.detail).toContain('EXPORT_OPEN_PER_USER');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    const [{ n }] = await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM export_jobs WHERE owner_id = $1`, [reader.id]);
    expect(n).toBe(OPEN);
    await ask(owner, { format: 'csv' }).expect(202);
  });

  it('finished exports keeping EXPORT_STORAGE_QUOTA_BYTES: 429 naming the variable until one expires', async () => {
    const user = await createTestUser(sut.app);
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: user.username, role: 'readonly' }).expect(204);
    // A finished export of 1,500 bytes, as the worker records it.
    await sut.app.get(DataSource).query(
      `INSERT INTO export_jobs (id, owner_id, form_id, format, options, status, progress, path, size, expires_at) VALUES ($1, $2, $3, 'csv', '{}', 'done', 1, 'exports/x.csv', 1500, now() + interval '1 hour')`,
      [randomUUID(), user.id, formId],
    );
    const res = await ask(user, { format: 'xlsx' }).expect(429);
    expect(res.body.detail).toContain('EXPORT_STORAGE_QUOTA_BYTES');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(3000);
    await sut.app.get(DataSource).query(`UPDATE export_jobs SET expires_at = now() - interval '1 second' WHERE owner_id = $1`, [user.id]);
    await ask(user, { format: 'xlsx' }).expect(202);
  });
});
