import request from 'supertest';
import { DataSource } from 'typeorm';
import { demoXForm } from './forms-fixtures.js';
import { FAST_FORWARDING, until } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';
import { createTestUser } from './test-users.js';

/**
 * Per-user quotas for every kind of background work a user can start on rest services
 * (docs/security.md, "Rate limits, quotas and forwarding input"): replays (one open per
 * service, a few per user) and test-fires (per user per minute), and the default pace of every
 * kind of destination.
 */
describe('rest services: what one user can make the platform send', () => {
  const suite = withWorkerAppAndReceiver({ ...FAST_FORWARDING, FORWARD_TIMEOUT_MS: '60000', REPLAY_MAX_OPEN_PER_USER: '2', TEST_FIRE_PER_USER_PER_MINUTE: '3' });
  const api = () => request(suite.sut.url);

  const newForm = async (idString: string, submissions: number): Promise<number> => {
    const { owner } = suite;
    const id = (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
    for (let i = 0; i < submissions; i++) await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name: `n${i}` } }).expect(201);
    return id;
  };
  const newService = async (formId: number, path: string, token = suite.owner.token) =>
    (await api().post('/api/v1/restservices').set('Authorization', token).send({ xform: formId, name: 'generic_json', service_url: `${suite.rx.url}${path}` }).expect(201)).body as { id: number; effective_rate_limit_per_minute: number | null };

  it('ten overlapping replays of a 4-submission form: one 202, nine 409, the destination gets 4 requests', async () => {
    const formId = await newForm('replay_flood', 4);
    const svc = await newService(formId, '/flood');
    // A new service gets nothing of what existed before it: every request below is a replay's.
    const before = suite.rx.to('/flood').length;
    // The destination holds its answers until all ten requests are answered, so the first replay
    // is still open for each of them however slowly a busy machine serves them.
    let release!: () => void;
    suite.rx.script('/flood', [{ status: 200, body: 'ok', until: new Promise<void>((r) => (release = r)) }]);
    const answers = await Promise.all(Array.from({ length: 10 }, () => api().post(`/api/v1/restservices/${svc.id}/replay`).set('Authorization', suite.owner.token).send({})));
    release();
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([202, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    expect(answers.find((a) => a.status === 409)!.body.detail).toMatch(/replay of this service is still open/);
    const started = answers.find((a) => a.status === 202)!.body as { id: number };
    await until('the replay done', async () => (await api().get(`/api/v1/restservices/${svc.id}/replays/${started.id}`).set('Authorization', suite.owner.token).expect(200)).body.status === 'done', 60_000);
    expect(suite.rx.to('/flood').length - before).toBe(4);
    // Once it is done the service may be replayed again.
    await api().post(`/api/v1/restservices/${svc.id}/replay`).set('Authorization', suite.owner.token).send({}).expect(202);
  });

  it('a user has at most REPLAY_MAX_OPEN_PER_USER open replays over all services: 429, and a cancel frees one', async () => {
    const user = await createTestUser(suite.sut.app);
    const formId = (await api().post('/api/v1/forms').set('Authorization', user.token).attach('xml_file', Buffer.from(demoXForm('replay_quota')), 'form.xml').expect(201)).body.formid as number;
    for (let i = 0; i < 2; i++) await api().post('/api/v1/submissions').set('Authorization', user.token).send({ id: 'replay_quota', submission: { name: `q${i}` } }).expect(201);
    // A destination that keeps failing keeps the replays open (their rows retry).
    const services = [];
    for (let i = 0; i < 3; i++) {
      suite.rx.script(`/down${i}`, [{ status: 503 }]);
      services.push(await newService(formId, `/down${i}`, user.token));
    }
    const replay = (id: number) => api().post(`/api/v1/restservices/${id}/replay`).set('Authorization', user.token).send({});
    const first = await replay(services[0].id).expect(202);
    await replay(services[1].id).expect(202);
    const refused = await replay(services[2].id).expect(429);
    expect(refused.body.detail).toMatch(/2 replays open/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another user is not held back by this one.
    const other = await newForm('replay_quota_other', 1);
    await replay(services[2].id).expect(429);
    await api().post(`/api/v1/restservices/${(await newService(other, '/other')).id}/replay`).set('Authorization', suite.owner.token).send({}).expect(202);
    await api().delete(`/api/v1/restservices/${services[0].id}/replays/${first.body.id}`).set('Authorization', user.token).expect(204);
    await replay(services[2].id).expect(202);
  });

  it('test-fire: TEST_FIRE_PER_USER_PER_MINUTE per user, then 429 with Retry-After; other users unaffected', async () => {
    const formId = await newForm('test_fire_quota', 0);
    const svc = await newService(formId, '/fire');
    const sentBefore = suite.rx.to('/fire').length;
    const fire = (id: number, token: string) => api().post(`/api/v1/restservices/${id}/test`).set('Authorization', token);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await fire(svc.id, suite.owner.token)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(suite.rx.to('/fire').length - sentBefore).toBe(3);
    const limited = await fire(svc.id, suite.owner.token);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.detail).toMatch(/test-fires a minute/);
    const user = await createTestUser(suite.sut.app);
    const theirForm = (await api().post('/api/v1/forms').set('Authorization', user.token).attach('xml_file', Buffer.from(demoXForm('test_fire_other')), 'form.xml').expect(201)).body.formid as number;
    await fire((await newService(theirForm, '/fire', user.token)).id, user.token).expect(200);
  });

  it('every kind of destination is paced by default: generic services show FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE in force', async () => {
    const formId = await newForm('default_pace', 0);
    const svc = await newService(formId, '/paced');
    expect(svc.effective_rate_limit_per_minute).toBe(600);
    const rows = (await suite.sut.app.get(DataSource).query(`SELECT rate_limit_per_minute FROM rest_services WHERE id = $1`, [svc.id])) as Array<{ rate_limit_per_minute: number | null }>;
    expect(rows[0].rate_limit_per_minute).toBeNull();
  });
});
