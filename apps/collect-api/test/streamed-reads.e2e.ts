import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { busyConnections, eventually, slowReader, watcher, type SlowReader } from './slow-readers.js';

/**
 * Clients that stop reading a streamed response (docs/security.md, "Streamed reads and heavy
 * queries"): they get at most READS_PER_USER slots each and READ_POOL_SIZE in all, on a pool of
 * their own; submissions and readiness keep the main pool; a response that does not drain is cut
 * after STREAM_STALL_TIMEOUT_MS and its connection given back.
 */
describe('streamed reads: clients that stop reading never take the connections of others', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let readers: TestUser[];
  let db: pg.Client;
  let formId: number;
  const idString = `slow_${process.pid}`;
  const POOL = 3;
  const PER_USER = 2;

  beforeAll(async () => {
    sut = await startTestCollectApp({ DATABASE_POOL_SIZE: '4', READ_POOL_SIZE: String(POOL), READS_PER_USER: String(PER_USER), READ_SLOT_WAIT_MS: '0', STREAM_STALL_TIMEOUT_MS: '3000' });
    owner = await createTestUser(sut.app);
    readers = await Promise.all([0, 1, 2].map(() => createTestUser(sut.app)));
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: idString, fields: [{ name: 'n', type: 'text' }, { name: 'pad', type: 'text' }] }).expect(201)).body.formid;
    for (const r of readers) await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: r.username, role: 'readonly' }).expect(204);
    // 10,000 rows of 2 KB: every response below is far larger than the sockets' buffers.
    await sut.app.get(DataSource).query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id)
       SELECT $1, 'u' || i, jsonb_build_object('n', i::text, 'pad', repeat('x', 2000)), '<data/>', md5(i::text) || md5(i::text), $2 FROM generate_series(1, 10000) AS i`,
      [formId, owner.id],
    );
    db = await watcher(sut.config.DATABASE_URL);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await sut?.close();
  });

  it('twelve readers that stop reading: bounded slots and connections; a submission and /health/ready answer; all is given back after the deadline', async () => {
    const paths = [`/api/v1/data/${formId}.csv`, `/api/v1/data/${formId}?page_size=10000`];
    const open: Array<{ user: TestUser; reader: SlowReader }> = [];
    for (const user of readers) for (let i = 0; i < 4; i++) open.push({ user, reader: slowReader(sut.url, paths[i % 2]!, user.token) });
    const statuses = await Promise.all(open.map((o) => o.reader.status));
    const streaming = open.filter((_, i) => statuses[i] === 200);
    expect(streaming.length).toBeLessThanOrEqual(POOL);
    expect(streaming.length).toBeGreaterThan(0);
    for (const user of readers) expect(streaming.filter((o) => o.user === user).length).toBeLessThanOrEqual(PER_USER);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429 || s === 503)).toBe(true);
    expect(statuses).toContain(429);

    // Others keep answering while the readers hold their slots.
    const submitted = await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).timeout(20_000)
      .send({ id: idString, submission: { n: 'during', 'meta/instanceID': `uuid:${randomUUID()}` } });
    expect(submitted.status).toBe(201);
    expect((await request(sut.url).get('/health/ready').timeout(20_000)).status).toBe(200);
    const held = await busyConnections(db);
    expect(held.total).toBeLessThanOrEqual(POOL);
    expect(held.total).toBe(held.reads);

    // The server gives up on each reader that does not drain (the readers still do not read),
    // and its connection is given back; read on, each reader finds its response cut.
    const after = await eventually(() => busyConnections(db), (c) => c.total === 0, 30_000);
    expect(after).toEqual({ total: 0, reads: 0 });
    for (const o of streaming) o.reader.socket.resume();
    await Promise.all(streaming.map((o) => o.reader.closed));
    for (const o of open) o.reader.socket.destroy();
    await request(sut.url).get(`/api/v1/data/${formId}?page_size=600`).set('Authorization', readers[0]!.token).timeout(20_000).expect(200);
  }, 120_000);
});
