import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Group commit of the one-statement intake (docs/forms.md, "Intake: caches and one statement"):
 * concurrent JSON submissions share one multi-row statement, and each still gets its own checks,
 * its own duplicate test, its own outbox rows and its own answer. Real PostgreSQL; a pool of 2
 * connections, so many requests wait for a statement on their way and are grouped.
 */
describe('one-statement intake, grouped under concurrency', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let other: TestUser;
  const db = () => sut.app.get(DataSource);

  beforeAll(async () => {
    sut = await startTestCollectApp({ DATABASE_POOL_SIZE: '2' });
    owner = await createTestUser(sut.app);
    other = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  const newForm = async (idString: string) =>
    (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const submit = (token: string, idString: string, instanceId: string, name: string) =>
    request(sut.url).post('/api/v1/submissions').set('Authorization', token).send({ id: idString, submission: { name, meta: { instanceID: `uuid:${instanceId}` } } });

  it('each request of a grouped statement: its own row, checks, duplicate answer and outbox rows', async () => {
    const a = await newForm('group_a');
    const b = await newForm('group_b');
    // One service on A, two on B: every created submission gets exactly its form's outbox rows.
    const service = (form: number, path: string) =>
      request(sut.url).post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: form, name: 'generic_json', service_url: `http://127.0.0.1:9/${path}` }).expect(201);
    await service(a, 'a');
    await service(b, 'b1');
    await service(b, 'b2');

    const same = randomUUID();
    const sends: Array<{ kind: 'new' | 'same' | 'stranger'; form: string; uuid: string; name: string; token: string }> = [];
    for (let i = 0; i < 20; i++) sends.push({ kind: 'new', form: i % 2 ? 'group_a' : 'group_b', uuid: randomUUID(), name: `n${i}`, token: owner.token });
    for (let i = 0; i < 8; i++) sends.push({ kind: 'same', form: 'group_a', uuid: same, name: 'same', token: owner.token });
    // A user without a role on A: refused, whatever shares its statement.
    for (let i = 0; i < 4; i++) sends.push({ kind: 'stranger', form: 'group_a', uuid: randomUUID(), name: `s${i}`, token: other.token });
    sends.sort(() => Math.random() - 0.5);

    const answers = await Promise.all(sends.map((s) => submit(s.token, s.form, s.uuid, s.name)));
    answers.forEach((res, i) => {
      const s = sends[i]!;
      if (s.kind === 'stranger') return expect(res.status).toBe(404);
      expect([201, 202]).toContain(res.status);
      // Its own answer: the instance it sent, on the form it named.
      expect(res.body).toMatchObject({ formid: s.form, instanceID: `uuid:${s.uuid}` });
      if (s.kind === 'new') expect(res.status).toBe(201);
    });
    const sameAnswers = answers.filter((_, i) => sends[i]!.kind === 'same').map((r) => r.status);
    expect(sameAnswers.filter((s) => s === 201)).toHaveLength(1);
    expect(sameAnswers.filter((s) => s === 202)).toHaveLength(7);

    const stored = (await db().query(
      `SELECT s.id, s.uuid, s.form_id, s.json->>'name' AS name,
         (SELECT count(*)::int FROM rest_deliveries d WHERE d.submission_id = s.id) AS outbox,
         (SELECT count(*)::int FROM rest_deliveries d WHERE d.submission_id = s.id AND d.event = 'created' AND d.snapshot IS NULL) AS own_snapshot
       FROM submissions s WHERE s.form_id = ANY($1) ORDER BY s.id`,
      [[a, b]],
    )) as Array<{ id: number; uuid: string; form_id: number; name: string; outbox: number; own_snapshot: number }>;
    const expected = sends.filter((s) => s.kind === 'new').map((s) => `${s.form}/${s.uuid}/${s.name}`).concat(`group_a/${same}/same`).sort();
    expect(stored.map((r) => `${r.form_id === a ? 'group_a' : 'group_b'}/${r.uuid}/${r.name}`).sort()).toEqual(expected);
    for (const r of stored) {
      expect(r.outbox).toBe(r.form_id === a ? 1 : 2);
      // Each outbox row is its own submission's created row, not a neighbour's in the statement; it
      // stores no snapshot: the claim builds one from the submission it names (migration 1764950000000).
      expect(r.own_snapshot).toBe(r.outbox);
    }
    // Grouping happened: some rows were written by one transaction (one statement) together.
    const shared = (await db().query(`SELECT count(*)::int AS n FROM (SELECT xmin FROM submissions WHERE form_id = ANY($1) GROUP BY xmin HAVING count(*) > 1) t`, [[a, b]])) as Array<{ n: number }>;
    expect(shared[0]!.n).toBeGreaterThan(0);
  });

  it('a stale cached role is refused by its own row of a grouped statement, beside rows that are stored', async () => {
    await newForm('group_stale');
    const collector = await createTestUser(sut.app);
    const formId = (await db().query(`SELECT id FROM forms WHERE id_string = 'group_stale'`))[0].id as number;
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: collector.username, role: 'dataentry' }).expect(204);
    await submit(collector.token, 'group_stale', randomUUID(), 'cached').expect(201); // the role is cached now
    // The share goes without a notification: only the statement's own check can see it.
    await db().query('ALTER TABLE form_roles DISABLE TRIGGER form_roles_notify');
    try {
      await db().query('DELETE FROM form_roles WHERE form_id = $1 AND user_id = $2', [formId, collector.id]);
      const sends = [...Array.from({ length: 12 }, () => owner), ...Array.from({ length: 6 }, () => collector)].sort(() => Math.random() - 0.5);
      const answers = await Promise.all(sends.map((user, i) => submit(user.token, 'group_stale', randomUUID(), `s${i}`)));
      answers.forEach((res, i) => expect([sends[i]!.username, res.status]).toEqual([sends[i]!.username, sends[i] === owner ? 201 : 404]));
    } finally {
      await db().query('ALTER TABLE form_roles ENABLE TRIGGER form_roles_notify');
    }
    const stored = (await db().query(`SELECT submitted_by_id, count(*)::int AS n FROM submissions WHERE form_id = $1 GROUP BY 1 ORDER BY 1`, [formId])) as Array<{ submitted_by_id: number; n: number }>;
    expect(stored).toEqual([{ submitted_by_id: owner.id, n: 12 }, { submitted_by_id: collector.id, n: 1 }].sort((x, y) => x.submitted_by_id - y.submitted_by_id));
  });
});
