import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ChangeNotifications } from '../src/database/change-notifications.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { startReplica, startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestBearerToken, createTestUser, type TestUser } from './test-users.js';
import { UsersService } from '../src/users/users.service.js';

/**
 * Two collect-api instances on one database (replicas behind a load balancer): a share given,
 * taken away or a form closed on one is honoured by the other on the very next submission,
 * although intake reads forms and roles from a per-process cache (docs/forms.md,
 * "Intake: caches and one statement").
 */
describe('form and role cache across replicas', () => {
  let a: TestCollectApp;
  let b: NestExpressApplication;
  let bUrl: string;
  let owner: TestUser;
  let collector: TestUser;
  let formId: number;
  const idString = `replica_${process.pid}`;

  const submitJson = (url: string, user: TestUser) =>
    request(url).post('/api/v1/submissions').set('Authorization', user.token).send({ id: idString, submission: { name: 'x', 'meta/instanceID': `uuid:${randomUUID()}` } });
  const submitXml = (url: string, user: TestUser) =>
    request(url).post('/submission').set('Authorization', user.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ idString, instanceId: randomUUID() })), 'submission.xml');
  const share = (user: TestUser, role: string, remove = false) =>
    request(a.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: user.username, role, remove }).expect(204);

  beforeAll(async () => {
    a = await startTestCollectApp();
    ({ app: b, url: bUrl } = await startReplica(a));
    owner = await createTestUser(a.app);
    collector = await createTestUser(a.app);
    const res = await request(a.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201);
    formId = res.body.formid;
    // Both processes listen for changes before the test starts.
    for (const app of [a.app, b]) await waitFor(() => app.get(ChangeNotifications).live);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a share taken away on one instance refuses on the other at once; given back, permits at once', async () => {
    await share(collector, 'dataentry');
    // Fill B's cache with the collector's role.
    await submitJson(bUrl, collector).expect(201);
    await submitXml(bUrl, collector).expect(201);

    await share(collector, 'dataentry', true);
    await submitJson(bUrl, collector).expect(404);
    await share(collector, 'readonly');
    await submitXml(bUrl, collector).expect(403);
    await share(collector, 'dataentry');
    await submitJson(bUrl, collector).expect(201);
    await submitXml(bUrl, collector).expect(201);
  });

  it('a form closed to submissions on one instance refuses on the other at once, re-opened permits', async () => {
    await share(collector, 'dataentry');
    await submitJson(bUrl, collector).expect(201);
    await request(a.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ downloadable: false }).expect(200);
    await submitJson(bUrl, collector).expect(403);
    await request(a.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ downloadable: true }).expect(200);
    await submitJson(bUrl, collector).expect(201);
  });

  it('a missed notification (trigger disabled) still never lets a stale cached role submit', async () => {
    await share(collector, 'dataentry');
    await submitJson(bUrl, collector).expect(201); // B caches the role
    const ds = a.app.get(DataSource);
    await ds.query('ALTER TABLE form_roles DISABLE TRIGGER form_roles_notify');
    try {
      await ds.query('DELETE FROM form_roles WHERE form_id = $1 AND user_id = $2', [formId, collector.id]);
      await submitJson(bUrl, collector).expect(404);
      await submitXml(bUrl, collector).expect(404);
      expect(await ds.query('SELECT count(*)::int AS n FROM submissions WHERE form_id = $1 AND submitted_by_id = $2', [formId, collector.id])).toEqual([{ n: 7 }]);
    } finally {
      await ds.query('ALTER TABLE form_roles ENABLE TRIGGER form_roles_notify');
    }
  });

  it('a change notification reaches the other instance and drops its entry', async () => {
    const changes = b.get(ChangeNotifications);
    const seen: string[] = [];
    changes.on('role', (rest) => seen.push(rest));
    await share(collector, 'editor');
    await waitFor(() => seen.includes(`${formId}:${collector.id}`));
  });
});

/**
 * The authentication caches (AUTH_TOKEN_CACHE_TTL_MS, here far longer than the test) follow a
 * change of the user row made by another instance when it commits, not after the TTL.
 */
describe('authentication caches across replicas', () => {
  let a: TestCollectApp;
  let b: NestExpressApplication;
  let bUrl: string;

  beforeAll(async () => {
    a = await startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '300000' });
    ({ app: b, url: bUrl } = await startReplica(a));
    for (const app of [a.app, b]) await waitFor(() => app.get(ChangeNotifications).live);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a user deactivated on one instance is refused by the other (Token and Bearer, cached there)', async () => {
    const user = await createTestUser(a.app);
    const bearer = await createTestBearerToken(a.app, user);
    for (const auth of [user.token, bearer]) await request(bUrl).get('/api/v1/user').set('Authorization', auth).expect(200);
    await a.app.get(UsersService).setActive(user.id, false);
    for (const auth of [user.token, bearer]) await waitForStatus(() => request(bUrl).get('/api/v1/user').set('Authorization', auth), 401);
    await a.app.get(UsersService).setActive(user.id, true);
    for (const auth of [user.token, bearer]) await waitForStatus(() => request(bUrl).get('/api/v1/user').set('Authorization', auth), 200);
  });

  it('a Bearer caller sees a changed profile from the other instance', async () => {
    const user = await createTestUser(a.app, { firstName: 'Before' });
    const bearer = await createTestBearerToken(a.app, user);
    expect((await request(bUrl).get('/api/v1/user').set('Authorization', bearer).expect(200)).body.first_name).toBe('Before');
    await a.app.get(DataSource).query(`UPDATE users SET first_name = 'After' WHERE id = $1`, [user.id]);
    await waitFor(async () => (await request(bUrl).get('/api/v1/user').set('Authorization', bearer)).body.first_name === 'After');
  });
});

async function waitForStatus(send: () => request.Test, status: number): Promise<void> {
  await waitFor(async () => (await send()).status === status);
}

/** Polls `check` until it holds; a liveness bound far below the caches' TTL, not a speed assertion. */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
