import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { cursorRows } from '../src/database/cursor.js';
import { ReadSlots } from '../src/database/read-slots.js';
import { SubmissionDataService } from '../src/submissions/submission-data.service.js';
import { mediaFormDefinition, submitMedia } from './media-fixtures.js';
import { IDLE, readClient, readState, type ReadMode, type ReadState } from './read-clients.js';
import { eventually, watcher } from './slow-readers.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Heavy reads under small pools (docs/security.md, "Streamed reads and heavy queries"): many
 * users reading in parallel, some clients that stop reading, leave while they wait or leave
 * mid-stream. Every request is answered (200, 429 or 503, never a hang) and afterwards every
 * read slot, pooled connection and database session is back, counted by the app's own
 * counters and by pg_stat_activity, and a normal read succeeds.
 */
describe('read slots and connections are always given back', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let db: pg.Client;
  const ids: Record<string, number> = {};
  const POOL = 3;

  beforeAll(async () => {
    sut = await startTestCollectApp({ DATABASE_POOL_SIZE: '3', READ_POOL_SIZE: String(POOL), READS_PER_USER: '2', READ_SLOT_WAIT_MS: '5000', STREAM_STALL_TIMEOUT_MS: '2000' });
    owner = await createTestUser(sut.app);
    const api = () => request(sut.url);
    const text = `release_${process.pid}`;
    ids.form = (await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: text, fields: [{ name: 'n', type: 'integer' }, { name: 'pad', type: 'text' }] }).expect(201)).body.formid;
    // 4,000 rows of about 2 KB of hex: each response is larger than the sockets' buffers.
    await sut.app.get(DataSource).query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id)
       SELECT $1, 'r' || i, jsonb_build_object('n', i, 'pad', (SELECT string_agg(md5(i::text || '-' || j), '') FROM generate_series(1, 60) j)), '<data/>', md5(i::text) || md5(i::text), $2
       FROM generate_series(1, 4000) AS i`,
      [ids.form, owner.id],
    );
    ids.media = (await api().post('/api/v1/forms').set('Authorization', owner.token).send(mediaFormDefinition(`release_media_${process.pid}`)).expect(201)).body.formid;
    await submitMedia(sut, owner, ids.media, `release_media_${process.pid}`, { instanceId: randomUUID(), age: '30', walk: { name: 'walk.avi', data: randomBytes(8 * 1024 * 1024), type: 'video/x-msvideo' } });
    ids.merged = (await api().post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'release', xforms: [ids.form, ids.media] }).expect(201)).body.id;
    db = await watcher(sut.config.DATABASE_URL);
  }, 180_000);
  afterAll(async () => {
    await db?.end();
    await sut?.close();
  });

  async function readers(n: number): Promise<TestUser[]> {
    const users = await Promise.all(Array.from({ length: n }, () => createTestUser(sut.app)));
    for (const u of users) {
      for (const pk of [ids.form, ids.media]) await request(sut.url).put(`/api/v1/forms/${pk}/share`).set('Authorization', owner.token).send({ username: u.username, role: 'readonly' }).expect(204);
    }
    return users;
  }

  const ROUTES: Record<string, () => string> = {
    csv: () => `/api/v1/data/${ids.form}.csv`,
    xlsx: () => `/api/v1/data/${ids.form}.xlsx`,
    page: () => `/api/v1/data/${ids.form}?page_size=4000`,
    sorted: () => `/api/v1/data/${ids.form}?limit=300&sort=${encodeURIComponent('{"n":-1}')}`,
    merged: () => `/api/v1/merged-datasets/${ids.merged}/data?page_size=4000`,
    zip: () => `/api/v1/media.zip?xform=${ids.media}`,
  };

  /** Everything given back (the state is shown when it is not). */
  async function expectAllBack(): Promise<void> {
    const state = await eventually<ReadState>(() => readState(sut, db), (s) => JSON.stringify(s) === JSON.stringify(IDLE), 30_000);
    expect(state).toEqual(IDLE);
  }

  /** Each user reads a CSV and a cursor page to their end. */
  async function normalReads(users: TestUser[]): Promise<void> {
    for (const u of users) {
      for (const route of ['csv', 'page']) {
        const o = await readClient(sut.url, ROUTES[route]!(), u.token, { kind: 'read' }).outcome;
        expect({ route, status: o.status, complete: o.complete }).toEqual({ route, status: 200, complete: true });
      }
    }
  }

  it('clients that leave before their read reaches its slot leave no slot, connection or session held', async () => {
    const users = await readers(3);
    // Their tokens are not cached yet: the lookups wait on this lock, holding every connection
    // of the main pool, while the clients leave; then the requests go on without a client.
    const lock = await watcher(sut.config.DATABASE_URL);
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE');
      const routes = ['page', 'page', 'page', 'csv', 'merged', 'zip'];
      const clients = routes.map((route, i) => readClient(sut.url, ROUTES[route]!(), users[i % 3]!.token, { kind: 'read' }));
      const waits = await eventually(
        async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0]!.n,
        (n) => n >= POOL,
        30_000,
      );
      expect(waits).toBeGreaterThanOrEqual(POOL);
      for (const c of clients) c.close();
      const server = sut.app.getHttpServer();
      const open = await eventually(() => new Promise<number>((r) => server.getConnections((_e, n) => r(n))), (n) => n === 0, 30_000);
      expect(open).toBe(0);
      await lock.query('ROLLBACK');
    } finally {
      await lock.query('ROLLBACK').catch(() => undefined);
      await lock.end();
    }
    await expectAllBack();
    await normalReads(users);
    await expectAllBack();
  }, 120_000);

  it('a cursor whose client leaves between two statements runs no further statement and gives its connection back', async () => {
    // The cancel on leaving reaches only a statement running at that moment; here none runs.
    const lease = sut.app.get(ReadSlots).background();
    const rows = cursorRows<{ n: number }>(lease, 'SELECT generate_series(1, 2000) AS n', []);
    expect((await rows.next()).value).toHaveLength(500);
    expect((await readState(sut, db)).readPool.lent).toBe(1);
    lease.abort();
    // 499: the read stops for a client that closed its request (database/read-pool.ts).
    expect(await rows.next().then(() => 'read on', (err: { getStatus?: () => number }) => err.getStatus?.())).toBe(499);
    await expectAllBack();
  }, 60_000);

  it('a JSON page whose writer stops at its first batch (its client left) gives its cursor connection back', async () => {
    const lease = sut.app.get(ReadSlots).background();
    const user = { id: owner.id, username: owner.username, isSuperuser: false, scheme: 'token' as const };
    const page = await sut.app.get(SubmissionDataService).formPage(user, String(ids.form), { offset: 0, limit: 4000, page: null, lease });
    expect((await readState(sut, db)).readPool.lent).toBe(1);
    // What sendJsonArray's loop does when it stops before taking a second batch.
    expect((await page.batches!.next()).done).toBe(false);
    await page.batches!.return(undefined);
    await expectAllBack();
  }, 60_000);

  it('users × parallel heavy reads of every kind, with readers that stop or leave: all answered, all given back', async () => {
    const users = await readers(4);
    const MODES: ReadMode[] = [
      { kind: 'read' },
      { kind: 'stop' },
      { kind: 'leave', afterMs: 0 },
      { kind: 'leave', afterMs: 15 },
      { kind: 'read' },
      { kind: 'leave', afterMs: 60 },
      { kind: 'leave-streaming' },
      { kind: 'leave', afterMs: 250 },
      { kind: 'read' },
    ];
    const names = Object.keys(ROUTES);
    const runs = users.flatMap((u, i) => MODES.map((mode, j) => {
      const route = names[(i + j) % names.length]!;
      return { route, mode, client: readClient(sut.url, ROUTES[route]!(), u.token, mode) };
    }));
    const outcomes = await Promise.all(runs.map((r) => r.client.outcome));
    const answered = runs.map((r, i) => ({ route: r.route, mode: r.mode.kind, ...outcomes[i]! }));
    // A client that stays is answered: 200 (read to its end when read), or 429/503 after its wait.
    const stayed = answered.filter((a) => a.mode === 'read' || a.mode === 'stop');
    const hung = stayed.filter((a) => ![200, 429, 503].includes(a.status) || (a.mode === 'read' && a.status === 200 && !a.complete));
    expect({ hung, state: hung.length ? await readState(sut, db) : null }).toEqual({ hung: [], state: null });
    expect(stayed.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    // Clients that left never answered with anything else either.
    expect(answered.filter((a) => a.status !== 0 && ![200, 429, 503].includes(a.status))).toEqual([]);
    for (const r of runs) r.client.close();
    await expectAllBack();
    await normalReads(users);
    await expectAllBack();
  }, 120_000);
});
