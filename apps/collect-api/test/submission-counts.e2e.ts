import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SubmissionCounts1764910000000 } from '../src/migrations/1764910000000-submission-counts.js';
import { DataChanges1764910000001 } from '../src/migrations/1764910000001-data-changes.js';
import { FOLD_AT } from '../src/submissions/submission-data.repository.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * The count of live submissions the database keeps per form (migration 1764910000000) answers a
 * plain page's X-Total-Count; it must equal count(*) of the live rows after every kind of write
 * (docs/data-api.md, "How it runs"). A filtered page still counts its matches.
 */
describe('kept submission counts: X-Total-Count of a plain data page', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let db: DataSource;
  const forms: Array<{ id: number; idString: string }> = [];

  const submitJson = (idString: string, name: string, extra: Record<string, string> = {}) =>
    request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name, 'meta/instanceID': `uuid:${randomUUID()}`, ...extra } });
  const live = async (formId: number) => Number((await db.query('SELECT count(*)::int AS n FROM submissions WHERE form_id = $1 AND deleted_at IS NULL', [formId]))[0].n);
  const kept = async (formId: number) => Number((await db.query('SELECT COALESCE(sum(delta), 0)::int AS n FROM submission_count_deltas WHERE form_id = $1', [formId]))[0].n);
  const deltaRows = async (formId: number) => Number((await db.query('SELECT count(*)::int AS n FROM submission_count_deltas WHERE form_id = $1', [formId]))[0].n);
  const total = async (formId: number, user: TestUser = reader, query = '') => {
    const res = await request(sut.url).get(`/api/v1/data/${formId}?page_size=2${query}`).set('Authorization', user.token).expect(200);
    return Number(res.headers['x-total-count']);
  };
  /** The page's total, the kept sum and count(*) of live rows agree, for every form. */
  const expectExact = async () => {
    for (const f of forms) {
      const n = await live(f.id);
      expect({ form: f.idString, kept: await kept(f.id), page: await total(f.id) }).toEqual({ form: f.idString, kept: n, page: n });
    }
  };

  beforeAll(async () => {
    sut = await startTestCollectApp();
    db = sut.app.get(DataSource);
    owner = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
    for (const idString of [`counts_a_${process.pid}`, `counts_b_${process.pid}`]) {
      const res = await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201);
      forms.push({ id: res.body.formid, idString });
      await request(sut.url).put(`/api/v1/forms/${res.body.formid}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    }
  });
  afterAll(async () => {
    await sut?.close();
  });

  it('is exact after JSON intake (concurrent, group-committed), OpenRosa intake and duplicates', async () => {
    const [a, b] = forms;
    expect(await total(a!.id)).toBe(0);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => submitJson(i % 3 ? a!.idString : b!.idString, `n${i}`)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    const instanceId = randomUUID();
    const xml = demoInstance({ instanceId }).replace(/id="[^"]+"/, `id="${a!.idString}"`);
    await request(sut.url).post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(xml), 'submission.xml').expect(201);
    // The same instance again is a duplicate: no row, no delta.
    await request(sut.url).post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(xml), 'submission.xml').expect(202);
    await expectExact();
    expect(await live(a!.id)).toBe(27); // 26 JSON (i % 3 != 0) and the OpenRosa one
    expect(await live(b!.id)).toBe(14);
  });

  it('is exact after soft delete, an edit that replaces an instance, a hard delete, an undelete and a move between forms', async () => {
    const [a, b] = forms;
    await submitJson(a!.idString, 'to edit').expect(201);
    const row = (await db.query('SELECT id, uuid FROM submissions WHERE form_id = $1 ORDER BY id DESC LIMIT 1', [a!.id]))[0] as { id: number; uuid: string };
    // An edit (meta/deprecatedID) replaces the row: the count stays.
    const before = await live(a!.id);
    await submitJson(a!.idString, 'edited', { 'meta/deprecatedID': `uuid:${row.uuid}` }).expect(201);
    expect(await live(a!.id)).toBe(before);
    await expectExact();
    // Soft delete through the API.
    await request(sut.url).delete(`/api/v1/data/${a!.id}/${row.id}`).set('Authorization', owner.token).expect(204);
    await expectExact();
    // Writes the API does not make, straight to the table: the triggers see them all.
    await db.query('UPDATE submissions SET deleted_at = NULL WHERE id = $1', [row.id]);
    await expectExact();
    const [victim] = (await db.query('SELECT id FROM submissions WHERE form_id = $1 AND deleted_at IS NULL ORDER BY id LIMIT 1', [b!.id])) as Array<{ id: number }>;
    await db.query('DELETE FROM submissions WHERE id = $1', [victim!.id]);
    await expectExact();
    await db.query('UPDATE submissions SET form_id = $2 WHERE id IN (SELECT id FROM submissions WHERE form_id = $1 AND deleted_at IS NULL ORDER BY id LIMIT 3)', [a!.id, b!.id]);
    // An update that changes neither form nor liveness writes a row of delta 0 (a change the page cache must see).
    const rows = await deltaRows(a!.id);
    await db.query('UPDATE submissions SET bamboo_dataset_id = $2 WHERE form_id = $1', [a!.id, 'x']);
    expect(await deltaRows(a!.id)).toBe(rows + 1);
    await expectExact();
    // A deleted row that is deleted for good changes nothing.
    await db.query('UPDATE submissions SET deleted_at = now() WHERE id = $1', [row.id]);
    await db.query('DELETE FROM submissions WHERE id = $1', [row.id]);
    await expectExact();
  });

  it('a filtered page counts its matches, not the kept count', async () => {
    const [a] = forms;
    const [{ name }] = (await db.query(`SELECT json->>'name' AS name FROM submissions WHERE form_id = $1 AND deleted_at IS NULL AND json->>'name' LIKE 'n%' LIMIT 1`, [a!.id])) as Array<{ name: string }>;
    const matches = Number((await db.query(`SELECT count(*)::int AS n FROM submissions WHERE form_id = $1 AND deleted_at IS NULL AND json->>'name' = $2`, [a!.id, name]))[0].n);
    expect(matches).toBe(1);
    expect(await total(a!.id, reader, `&query=${encodeURIComponent(JSON.stringify({ name }))}`)).toBe(matches);
    expect(await total(a!.id, reader, `&query=${encodeURIComponent(JSON.stringify({ name: { $ne: name } }))}`)).toBe((await live(a!.id)) - matches);
    expect(await total(a!.id, reader, `&query=${encodeURIComponent(JSON.stringify({ _submitted_by: reader.username }))}`)).toBe(0);
    // start/limit and the owner's view give the same total; a user without a role gets no count.
    const res = await request(sut.url).get(`/api/v1/data/${a!.id}?start=0&limit=1`).set('Authorization', owner.token).expect(200);
    expect(Number(res.headers['x-total-count'])).toBe(await live(a!.id));
    const stranger = await createTestUser(sut.app);
    const refused = await request(sut.url).get(`/api/v1/data/${a!.id}?page_size=2`).set('Authorization', stranger.token).expect(404);
    expect(refused.headers['x-total-count']).toBeUndefined();
  });

  it('a page read folds many delta rows into one, exact while intake goes on', async () => {
    const [a] = forms;
    for (let i = 0; i < FOLD_AT + 4; i++) await submitJson(a!.idString, `fold${i}`).expect(201);
    expect(await deltaRows(a!.id)).toBeGreaterThan(FOLD_AT);
    // Pages (which fold) and intake at the same time: every total a page shows is a count some
    // snapshot saw, and the end state is exact.
    const intake = Promise.all(Array.from({ length: 30 }, (_, i) => submitJson(a!.idString, `during${i}`).expect(201)));
    const pages = Promise.all(Array.from({ length: 10 }, () => total(a!.id)));
    await Promise.all([intake, pages]);
    await expectExact();
    // One page read past FOLD_AT rows leaves one row with the same sum.
    for (let i = 0; i < FOLD_AT + 1; i++) await submitJson(a!.idString, `more${i}`).expect(201);
    await total(a!.id);
    await waitFor(async () => (await deltaRows(a!.id)) === 1);
    await expectExact();
  });

  it("the migration's baseline equals the live rows of every form", async () => {
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const counts = new SubmissionCounts1764910000000();
      const changes = new DataChanges1764910000001();
      await changes.down(runner);
      await counts.down(runner);
      await counts.up(runner);
      await changes.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    for (const f of forms) expect(await deltaRows(f.id)).toBe(1);
    await expectExact();
    // TRUNCATE empties every count (and leaves one change row of form 0 for the page cache).
    await db.query('TRUNCATE submissions CASCADE');
    await expectExact();
    expect(Number((await db.query('SELECT count(*)::int AS n FROM submission_count_deltas WHERE form_id <> 0'))[0].n)).toBe(0);
    expect(await total(forms[0]!.id)).toBe(0);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
