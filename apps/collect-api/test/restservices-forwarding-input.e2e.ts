import request from 'supertest';
import { DataSource } from 'typeorm';
import { ServiceCredentials } from '../src/restservices/service-credentials.js';
import { demoXForm } from './forms-fixtures.js';
import { FAST_FORWARDING, until } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';

/** Characters no HTTP header value may carry (docs/security.md, "Rate limits, quotas and forwarding input"). */
const BAD = [
  ['SOH', 'a\u0001b'], ['NUL', 'a\u0000b'], ['CR', 'a\rb'], ['LF', 'a\nb'], ['CRLF + header', 'a\r\nX-Injected: 1'],
  ['ESC', 'a\u001bb'], ['DEL', 'a\u007fb'], ['C1 NEL', 'a\u0085b'], ['bidi RLO', 'a\u202eb'], ['bidi LRI', 'a\u2066b'], ['line separator', 'a\u2028b'],
] as const;

/**
 * Control characters in every header a user sets on a rest service: refused at the API (400),
 * and a value stored before that check fails its delivery once, in the log, instead of
 * breaking the sender (docs/restservices.md, "Delivery model").
 */
describe('rest services: control characters in the headers a user sets', () => {
  const suite = withWorkerAppAndReceiver({ ...FAST_FORWARDING, FORWARD_MAX_ATTEMPTS: '3' });
  const api = () => request(suite.sut.url);
  let formId: number;
  let submissionId: number;
  beforeAll(async () => {
    formId = (await api().post('/api/v1/forms').set('Authorization', suite.owner.token).attach('xml_file', Buffer.from(demoXForm('fwd_input')), 'form.xml').expect(201)).body.formid as number;
    await api().post('/api/v1/submissions').set('Authorization', suite.owner.token).send({ id: 'fwd_input', submission: { name: 'before any service' } }).expect(201);
    submissionId = ((await suite.sut.app.get(DataSource).query(`SELECT id FROM submissions WHERE form_id = $1`, [formId])) as Array<{ id: number }>)[0].id;
  });

  // Every value a user sets that is written into a request header, with a body it is valid in.
  const FIELDS = [
    { field: 'headers (value)', body: (v: string) => ({ name: 'generic_json', headers: { 'X-A': v } }) },
    { field: 'headers (name)', body: (v: string) => ({ name: 'generic_json', headers: { [`X-${v}`]: 'x' } }) },
    { field: 'auth_token (messaging)', body: (v: string) => ({ name: 'messaging', auth_token: v, flow_uuid: 'f-1', contacts: 'a' }) },
  ];
  const table = FIELDS.flatMap((f) => BAD.map(([label, value]) => ({ field: f.field, label, value, body: f.body })));

  it.each(table)('$field with $label: 400 on POST and on PATCH, nothing stored', async ({ body, value }) => {
    const path = `/bad-${Math.random().toString(36).slice(2)}`;
    const create = await api().post('/api/v1/restservices').set('Authorization', suite.owner.token).send({ xform: formId, service_url: `${suite.rx.url}${path}`, ...body(value) });
    expect(create.status).toBe(400);
    const ok = await api().post('/api/v1/restservices').set('Authorization', suite.owner.token).send({ xform: formId, service_url: `${suite.rx.url}${path}`, ...body('fine') }).expect(201);
    const patch = await api().patch(`/api/v1/restservices/${ok.body.id}`).set('Authorization', suite.owner.token).send(body(value));
    expect(patch.status).toBe(400);
    await api().delete(`/api/v1/restservices/${ok.body.id}`).set('Authorization', suite.owner.token).expect(204);
  });

  it('a tab and Latin-1 letters are header characters: accepted', async () => {
    await api().post('/api/v1/restservices').set('Authorization', suite.owner.token).send({ xform: formId, name: 'generic_json', service_url: `${suite.rx.url}/fine`, headers: { 'X-A': 'caf\u00e9\tau lait' } }).expect(201);
  });

  it('a header value stored before the check: test-fire answers 200 with the refusal, a delivery fails once, logged, never claimed again', async () => {
    const svc = (await api().post('/api/v1/restservices').set('Authorization', suite.owner.token).send({ xform: formId, name: 'generic_json', service_url: `${suite.rx.url}/stored-bad`, headers: { 'X-A': 'ok' } }).expect(201)).body as { id: number };
    const db = suite.sut.app.get(DataSource);
    const enc = new ServiceCredentials(suite.sut.config).encryptHeaders({ 'X-A': 'a\u0001b' });
    await db.query(`UPDATE rest_services SET headers_enc = $2, date_modified = now() WHERE id = $1`, [svc.id, enc]);

    const fired = await api().post(`/api/v1/restservices/${svc.id}/test`).set('Authorization', suite.owner.token).expect(200);
    expect(fired.body.response).toBeNull();
    expect(fired.body.error).toMatch(/^refused: /);

    await api().post('/api/v1/submissions').set('Authorization', suite.owner.token).send({ id: 'fwd_input', submission: { name: 'after' } }).expect(201);
    const row = await until('the delivery failed', async () => {
      const [r] = (await db.query(`SELECT id, status, attempts FROM rest_deliveries WHERE service_id = $1`, [svc.id])) as Array<{ id: number; status: string; attempts: number }>;
      return r?.status === 'failed' && r;
    }, 30_000);
    expect(row.attempts).toBe(1);
    const log = (await db.query(`SELECT attempt, status, error FROM rest_delivery_attempts WHERE delivery_row_id = $1`, [row.id])) as Array<{ attempt: number; status: string; error: string }>;
    expect(log).toEqual([{ attempt: 1, status: 'failed', error: expect.stringMatching(/^refused: /) }]);
    expect(suite.rx.to('/stored-bad')).toHaveLength(0);
    // Nothing claims it again.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(((await db.query(`SELECT attempts FROM rest_deliveries WHERE id = $1`, [row.id])) as Array<{ attempts: number }>)[0].attempts).toBe(1);
  });

  it('a row whose attempts are spent (earlier sends left no record) is closed as failed, not sent past its limit', async () => {
    const svc = (await api().post('/api/v1/restservices').set('Authorization', suite.owner.token).send({ xform: formId, name: 'generic_json', service_url: `${suite.rx.url}/spent` }).expect(201)).body as { id: number };
    const db = suite.sut.app.get(DataSource);
    const [inserted] = (await db.query(
      `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, next_attempt_at, attempts, attempt_base)
       VALUES (gen_random_uuid(), $1, $2, 'created', 'retrying', now(), 3, 0) RETURNING id`,
      [svc.id, submissionId],
    )) as Array<{ id: number }>;
    await db.query(`SELECT pg_notify('rest_deliveries', '')`);
    const row = await until('the spent row closed', async () => {
      const [r] = (await db.query(`SELECT status, attempts FROM rest_deliveries WHERE id = $1`, [inserted.id])) as Array<{ status: string; attempts: number }>;
      return r?.status === 'failed' && r;
    }, 30_000);
    expect(row.attempts).toBe(3);
    expect(suite.rx.to('/spent')).toHaveLength(0);
    const log = (await db.query(`SELECT status, error FROM rest_delivery_attempts WHERE delivery_row_id = $1`, [inserted.id])) as Array<{ status: string; error: string }>;
    expect(log).toEqual([{ status: 'failed', error: expect.stringMatching(/attempt limit/) }]);
  });
});
