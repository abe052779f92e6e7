import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SubmissionCountFolder } from '../src/submissions/submission-count-folder.js';
import { FOLD_AT } from '../src/submissions/submission-data.repository.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * A form that is written and never read gathers one kept-count row per intake statement; the
 * worker folds it (docs/data-api.md, "How it runs"), and the count stays exact.
 */
describe('kept submission counts: the worker folds forms nobody reads', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let db: DataSource;

  beforeAll(async () => {
    sut = await startTestCollectApp({}, { worker: true });
    db = sut.app.get(DataSource);
    owner = await createTestUser(sut.app);
  });
  afterAll(async () => {
    await sut?.close();
  });

  const rows = async (formId: number) =>
    (await db.query('SELECT count(*)::int AS n, COALESCE(sum(delta), 0)::int AS total FROM submission_count_deltas WHERE form_id = $1', [formId]))[0] as { n: number; total: number };

  it('folds every form with more than FOLD_AT rows into one row of the same sum, and leaves the others', async () => {
    const form = async (idString: string) =>
      (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
    const submit = (idString: string) =>
      request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name: 'x', 'meta/instanceID': `uuid:${randomUUID()}` } }).expect(201);
    const busy = `fold_busy_${process.pid}`;
    const quiet = `fold_quiet_${process.pid}`;
    const [busyId, quietId] = [await form(busy), await form(quiet)];
    // One at a time: each its own intake statement, so each its own delta row.
    for (let i = 0; i < FOLD_AT + 4; i++) await submit(busy);
    for (let i = 0; i < 3; i++) await submit(quiet);
    await db.query('DELETE FROM submissions WHERE id = (SELECT max(id) FROM submissions WHERE form_id = $1)', [busyId]);
    expect(await rows(busyId)).toEqual({ n: FOLD_AT + 5, total: FOLD_AT + 3 });
    expect(await rows(quietId)).toEqual({ n: 3, total: 3 });

    expect(await sut.app.get(SubmissionCountFolder).foldOnce()).toBeGreaterThanOrEqual(1);
    expect(await rows(busyId)).toEqual({ n: 1, total: FOLD_AT + 3 });
    expect(await rows(quietId)).toEqual({ n: 3, total: 3 });
    const page = await request(sut.url).get(`/api/v1/data/${busyId}?page_size=2`).set('Authorization', owner.token).expect(200);
    expect(page.headers['x-total-count']).toBe(String(FOLD_AT + 3));
  });
});
