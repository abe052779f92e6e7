import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * A request holding a pooled connection never waits for a second one (docs/architecture.md,
 * "Database connections"). With a pool of ONE connection, any such holder stalls for ever; so
 * every read that streams through a cursor (a default data page of 1,000 rows, the exports)
 * answers here, alone and many at once. Each request carries a client timeout, so a stall fails
 * the test instead of hanging the run.
 */
describe('database connections: no request waits for a second pooled connection', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  const idString = `pool_one_${process.pid}`;
  const STALL_MS = 20_000;

  const get = (path: string) => request(sut.url).get(path).set('Authorization', owner.token).timeout(STALL_MS);

  beforeAll(async () => {
    // Room for every read below in the read slots (docs/security.md, "Streamed reads and heavy
    // queries"): what is tested here is the main pool of one.
    sut = await startTestCollectApp({ DATABASE_POOL_SIZE: '1', READ_POOL_SIZE: '10', READS_PER_USER: '10' });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid;
    for (let i = 0; i < 3; i++) {
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name: `n${i}`, 'meta/instanceID': `uuid:${randomUUID()}` } }).expect(201);
    }
  });
  afterAll(async () => {
    await sut?.close();
  });

  it('a default data page (streamed through a cursor) answers with its count on a pool of one', async () => {
    const res = await get(`/api/v1/data/${formId}`).expect(200);
    expect(res.body.map((r: { name: string }) => r.name)).toEqual(['n0', 'n1', 'n2']);
    expect(res.headers['x-total-count']).toBe('3');
    const offset = await get(`/api/v1/data/${formId}?start=1&limit=600`).expect(200);
    expect(offset.body).toHaveLength(2);
    expect(offset.headers['x-total-count']).toBe('3');
  });

  it('many cursor reads at once (pages, CSV and XLSX exports, one submission) all answer', async () => {
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => get(`/api/v1/data/${formId}`)),
      get(`/api/v1/data/${formId}.csv`),
      get(`/api/v1/data/${formId}.xlsx`),
      get(`/api/v1/data/${formId}?page_size=2`),
      request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).timeout(STALL_MS).send({ id: idString, submission: { name: 'late' } }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([...Array(9).fill(200), 201]);
    for (const page of answers.slice(0, 6)) expect(Number(page.headers['x-total-count'])).toBeGreaterThanOrEqual(3);
  });
});
