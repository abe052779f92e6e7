import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { RestServicesRepository } from '../src/restservices/restservices.repository.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { FAST_FORWARDING, headerNames, Receiver, until } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

// These OpenRosa submissions name files they do not attach; the media wait has its own suite (restservices-events).
// A request may take 10 s here: the deleted-before-send test holds every send slot with 6 s answers.
const FAST = { ...FAST_FORWARDING, FORWARD_MEDIA_WAIT_SECONDS: '0', FORWARD_TIMEOUT_MS: '10000' };

describe('rest services: CRUD, forwarders on the wire, retries, delivery log', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;
  let formId: number;

  withWorkerAppAndReceiver(FAST, async (suite) => {
    ({ sut, owner, rx } = suite);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm()), 'form.xml').expect(201)).body.formid;
  });

  const api = () => request(sut.url);
  const create = (body: Record<string, unknown>, who: TestUser = owner) => api().post('/api/v1/restservices').set('Authorization', who.token).send({ xform: formId, ...body });
  const submitJson = async (submission: Record<string, unknown>, form = formId) => {
    const idString = (await api().get(`/api/v1/forms/${form}`).set('Authorization', owner.token).expect(200)).body.id_string;
    const res = await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission }).expect(201);
    const uuid = String(res.body.instanceID).replace('uuid:', '');
    const list = await api().get(`/api/v1/data/${form}`).set('Authorization', owner.token).query({ page_size: 10000 }).expect(200);
    return list.body.find((s: { _uuid: string }) => s._uuid === uuid) as Record<string, unknown> & { _id: number };
  };
  /** Each test gets its own form (services are per form; the receiver path tells services apart). */
  const newForm = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const log = async (pk: number, status?: string) => (await api().get(`/api/v1/restservices/${pk}/deliveries`).query(status ? { status } : {}).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;

  describe('CRUD and validation', () => {
    it('creates, lists, reads, patches, replaces and deletes a generic_json service', async () => {
      const created = await create({ name: 'generic_json', service_url: `${rx.url}/crud` }).expect(201);
      expect(created.body).toEqual({
        id: expect.any(Number), xform: formId, name: 'generic_json', service_url: `${rx.url}/crud`, events: ['created', 'updated'], signing_enabled: false, active: true, inactive_reason: null,
        last_delivery_at: null, last_status: null, failure_count: 0, date_created: expect.any(String), date_modified: expect.any(String),
        fields: null, header_names: [], basic_auth_enabled: false, rate_limit_per_minute: null, encrypted_submissions: null, effective_rate_limit_per_minute: 600, success_rate_24h: null, p95_latency_ms_24h: null,
      });
      const pk = created.body.id;
      const list = await api().get('/api/v1/restservices').set('Authorization', owner.token).expect(200);
      expect(list.body.map((s: { id: number }) => s.id)).toContain(pk);
      const narrowed = await api().get('/api/v1/restservices').query({ xform: formId }).set('Authorization', owner.token).expect(200);
      expect(narrowed.body.every((s: { xform: number }) => s.xform === formId)).toBe(true);
      await api().get(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).expect(200, created.body);
      const patched = await api().patch(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).send({ service_url: `${rx.url}/crud2` }).expect(200);
      expect(patched.body).toMatchObject({ id: pk, name: 'generic_json', service_url: `${rx.url}/crud2` });
      const put = await api().put(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).send({ xform: formId, name: 'generic_xml', service_url: `${rx.url}/crud3` }).expect(200);
      expect(put.body).toMatchObject({ id: pk, name: 'generic_xml', service_url: `${rx.url}/crud3` });
      await api().delete(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).expect(204);
      await api().get(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).expect(404, { detail: 'Not found.' });
    });

    it('refuses bad payloads with field errors and stores nothing', async () => {
      const before = (await api().get('/api/v1/restservices').set('Authorization', owner.token)).body.length;
      expect((await create({ name: 'carrier_pigeon', service_url: `${rx.url}/x` }).expect(400)).body).toEqual({ name: [expect.stringContaining('not a valid choice')] });
      expect((await create({ name: 'generic_json', service_url: 'ftp://example.org/x' }).expect(400)).body).toEqual({ service_url: ['Enter an absolute http(s) URL.'] });
      expect((await create({ name: 'generic_json', service_url: '/relative' }).expect(400)).body).toEqual({ service_url: ['Enter an absolute http(s) URL.'] });
      expect((await create({ name: 'generic_json' }).expect(400)).body).toEqual({ service_url: ['This field is required.'] });
      expect((await create({ name: 'messaging', service_url: `${rx.url}/m` }).expect(400)).body).toEqual({
        auth_token: ['This field is required.'], flow_uuid: ['This field is required.'], contacts: ['This field is required.'],
      });
      expect((await create({ name: 'generic_json', service_url: `${rx.url}/x`, signing_secret: 'nope' }).expect(400)).body).toHaveProperty('signing_secret');
      expect((await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ name: 'generic_json', service_url: `${rx.url}/x` }).expect(400)).body).toEqual({ xform: ['This field is required.'] });
      expect((await api().post('/api/v1/restservices').set('Authorization', owner.token).send([1]).expect(400)).body).toEqual({ detail: 'Expected a JSON object.' });
      await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: 999999, name: 'generic_json', service_url: `${rx.url}/x` }).expect(404);
      await api().get('/api/v1/restservices').query({ xform: 'abc' }).set('Authorization', owner.token).expect(400);
      await api().get('/api/v1/restservices/abc').set('Authorization', owner.token).expect(404);
      // Without a sheet provider client configured, spreadsheet services are refused rather than stored and never synced.
      expect((await create({ name: 'spreadsheet', spreadsheet_title: 'Sheet' }).expect(400)).body).toEqual({ name: [expect.stringContaining('SHEETS_CLIENT_ID')] });
      expect((await api().get('/api/v1/restservices').set('Authorization', owner.token)).body.length).toBe(before);
    });

    it('answers 400 for a duplicate (xform, name, service_url)', async () => {
      await create({ name: 'generic_json', service_url: `${rx.url}/dup` }).expect(201);
      expect((await create({ name: 'generic_json', service_url: `${rx.url}/dup` }).expect(400)).body).toEqual({ detail: 'A rest service with this xform, name and service_url already exists.' });
      await create({ name: 'generic_xml', service_url: `${rx.url}/dup` }).expect(201);
    });

    it('messaging: returns auth_token, flow_title, flow_uuid, contacts; the token is encrypted at rest', async () => {
      const token = `tok-${randomBytes(8).toString('hex')}`;
      const res = await create({ name: 'messaging', service_url: `${rx.url}/flow-crud`, auth_token: token, flow_title: 'Intake', flow_uuid: 'f-1', contacts: 'a,b' }).expect(201);
      expect(res.body).toMatchObject({ name: 'messaging', auth_token: token, flow_title: 'Intake', flow_uuid: 'f-1', contacts: 'a,b' });
      const [row] = await sut.app.get(DataSource).query(`SELECT auth_token_enc, options::text AS options FROM rest_services WHERE id = $1`, [res.body.id]);
      expect(row.auth_token_enc).toMatch(/^v1\./);
      expect(row.auth_token_enc).not.toContain(token);
      expect(row.options).not.toContain(token);
      await api().get(`/api/v1/restservices/${res.body.id}`).set('Authorization', owner.token).expect(200).expect((r) => expect(r.body.auth_token).toBe(token));
      const patched = await api().patch(`/api/v1/restservices/${res.body.id}`).set('Authorization', owner.token).send({ contacts: 'c' }).expect(200);
      expect(patched.body).toMatchObject({ auth_token: token, contacts: 'c' });
    });

    it('signing_secret is write-only: responses show signing_enabled', async () => {
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const res = await create({ name: 'generic_json', service_url: `${rx.url}/signed-crud`, signing_secret: secret }).expect(201);
      expect(res.body.signing_enabled).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain(secret.slice(6, 20));
      const off = await api().patch(`/api/v1/restservices/${res.body.id}`).set('Authorization', owner.token).send({ signing_secret: null }).expect(200);
      expect(off.body.signing_enabled).toBe(false);
    });
  });

  describe('forwarders on the wire', () => {
    it('generic_json: POST, exactly the documented headers, body = the §2.2 object bytes', async () => {
      const form = await newForm('gj_form');
      const svc = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/gj` }).expect(201)).body;
      const sub = await submitJson({ name: 'Ann', age: '31', household: { size: '3' } }, form);
      const [req] = await until('generic_json delivery', () => rx.to('/gj').length >= 1 && rx.to('/gj'));
      expect(req.method).toBe('POST');
      expect(headerNames(req)).toEqual(['connection', 'content-length', 'content-type', 'host', 'user-agent', 'x-delivery-attempt', 'x-delivery-id', 'x-submission-event']);
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['user-agent']).toBe('collect-api-restservices/1.0');
      expect(req.headers['x-delivery-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(req.headers['x-delivery-attempt']).toBe('1');
      expect(req.headers['x-submission-event']).toBe('created');
      // The data endpoint serializes the same builder's object: the bytes must be identical.
      expect(req.body.toString('utf8')).toBe(JSON.stringify(sub));
      expect(Number(req.headers['content-length'])).toBe(req.body.length);
      const entries = await until('log entry', async () => { const l = await log(svc.id); return l.length && l; });
      expect(entries).toEqual([{
        id: expect.any(Number), delivery_id: req.headers['x-delivery-id'], attempt: 1, status: 'success', status_code: 200, latency_ms: expect.any(Number),
        error: null, response_excerpt: 'ok', event: 'created', created_at: expect.any(String),
      }]);
      const after = (await api().get(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token).expect(200)).body;
      expect(after).toMatchObject({ last_status: 'success', failure_count: 0, last_delivery_at: expect.any(String) });
    });

    it('forwards edits with X-Submission-Event: updated and the new content', async () => {
      const form = await newForm('edit_form');
      await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/edits` }).expect(201);
      const first = randomUUID();
      await submitJson({ name: 'Before', meta: { instanceID: `uuid:${first}` } }, form);
      await until('created delivery', () => rx.to('/edits').length >= 1);
      const second = randomUUID();
      const edited = await submitJson({ name: 'After', meta: { instanceID: `uuid:${second}`, deprecatedID: `uuid:${first}` } }, form);
      const [, upd] = await until('updated delivery', () => rx.to('/edits').length >= 2 && rx.to('/edits'));
      expect(upd.headers['x-submission-event']).toBe('updated');
      expect(upd.headers['x-delivery-id']).not.toBe(rx.to('/edits')[0].headers['x-delivery-id']);
      expect(upd.body.toString()).toBe(JSON.stringify(edited));
      expect(JSON.parse(upd.body.toString())).toMatchObject({ name: 'After', _uuid: second });
    });

    it('generic_xml: POST application/xml with the instance XML as submitted', async () => {
      const form = await newForm('household_survey_xml');
      await create({ xform: form, name: 'generic_xml', service_url: `${rx.url}/gx` }).expect(201);
      const xml = demoInstance({ instanceId: randomUUID(), idString: 'household_survey_xml', name: 'Xavier' });
      await api().post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
        .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' }).expect(201);
      const [req] = await until('generic_xml delivery', () => rx.to('/gx').length >= 1 && rx.to('/gx'));
      expect(req.method).toBe('POST');
      expect(headerNames(req)).toEqual(['connection', 'content-length', 'content-type', 'host', 'user-agent', 'x-delivery-attempt', 'x-delivery-id', 'x-submission-event']);
      expect(req.headers['content-type']).toBe('application/xml');
      expect(req.body.equals(Buffer.from(xml))).toBe(true);
    });

    it('health_forwarder: GET with %(field)s templating, values URL-encoded, no body', async () => {
      const form = await newForm('hf_form');
      await create({ xform: form, name: 'health_forwarder', service_url: `${rx.url}/hf?form=%(id_string)s&u=%(uuid)s&n=%(name)s&s=%(household_size)s&g=%(household/size)s&missing=%(nope)s` }).expect(201);
      const sub = await submitJson({ name: 'Zoë & co', household: { size: '5' } }, form);
      const [req] = await until('health delivery', () => rx.to('/hf').length >= 1 && rx.to('/hf'));
      expect(req.method).toBe('GET');
      expect(req.url).toBe(`/hf?form=hf_form&u=${sub._uuid}&n=Zo%C3%AB%20%26%20co&s=5&g=5&missing=`);
      expect(headerNames(req)).toEqual(['connection', 'host', 'user-agent', 'x-delivery-attempt', 'x-delivery-id', 'x-submission-event']);
      expect(req.body.length).toBe(0);
    });

    it('dataset_service: a JSON array with metadata columns prefixed by <id_string>_<form id>', async () => {
      const form = await newForm('ds_form');
      await create({ xform: form, name: 'dataset_service', service_url: `${rx.url}/ds`, dataset_id: 'ds-42' }).expect(201);
      const sub = await submitJson({ name: 'Dee', age: '40' }, form);
      const [req] = await until('dataset delivery', () => rx.to('/ds').length >= 1 && rx.to('/ds'));
      expect(req.method).toBe('POST');
      expect(req.headers['content-type']).toBe('application/json');
      const p = `ds_form_${form}`;
      const expected: Record<string, unknown> = {};
      for (const [k, v] of Object.entries({ ...sub, _bamboo_dataset_id: 'ds-42' })) expected[k.startsWith('_') ? `${p}${k}` : k.startsWith('meta/') ? `${p}_${k}` : k] = v;
      expect(req.body.toString()).toBe(JSON.stringify([expected]));
      const row = JSON.parse(req.body.toString())[0];
      expect(row).toMatchObject({ name: 'Dee', age: '40', [`${p}_id`]: sub._id, [`${p}_uuid`]: sub._uuid, [`${p}_bamboo_dataset_id`]: 'ds-42', [`${p}_meta/instanceID`]: `uuid:${sub._uuid}`, 'formhub/uuid': sub['formhub/uuid'] });
      expect(row).not.toHaveProperty('_id');
    });

    it('messaging: flow start with Authorization: Token and {flow, contacts, extra}', async () => {
      const form = await newForm('msg_form');
      await create({ xform: form, name: 'messaging', service_url: `${rx.url}/flows`, auth_token: 'secret-flow-token', flow_title: 'T', flow_uuid: 'flow-uuid-1', contacts: 'c1, c2,,c3' }).expect(201);
      const sub = await submitJson({ name: 'Mo', household: { size: '2' } }, form);
      const [req] = await until('messaging delivery', () => rx.to('/flows').length >= 1 && rx.to('/flows'));
      expect(req.method).toBe('POST');
      expect(headerNames(req)).toEqual(['authorization', 'connection', 'content-length', 'content-type', 'host', 'user-agent', 'x-delivery-attempt', 'x-delivery-id', 'x-submission-event']);
      expect(req.headers.authorization).toBe('Token secret-flow-token');
      const extra: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(sub)) if (v !== null) extra[k.replace(/\//g, '_')] = Array.isArray(v) ? JSON.stringify(v) : v;
      expect(req.body.toString()).toBe(JSON.stringify({ flow: 'flow-uuid-1', contacts: ['c1', 'c2', 'c3'], extra }));
      const body = JSON.parse(req.body.toString());
      expect(body.extra).toMatchObject({ name: 'Mo', household_size: '2', meta_instanceID: `uuid:${sub._uuid}`, _geolocation: '[null,null]', _attachments: '[]' });
      expect(body.extra).not.toHaveProperty('_deleted_at');
    });

    it('signs deliveries (Standard Webhooks) when a signing secret is set', async () => {
      const form = await newForm('sig_form');
      const key = randomBytes(32);
      await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/signed`, signing_secret: `whsec_${key.toString('base64')}` }).expect(201);
      await submitJson({ name: 'Sig' }, form);
      const [req] = await until('signed delivery', () => rx.to('/signed').length >= 1 && rx.to('/signed'));
      expect(req.headers['webhook-id']).toBe(req.headers['x-delivery-id']);
      const ts = String(req.headers['webhook-timestamp']);
      expect(ts).toMatch(/^\d{10}$/);
      const mac = createHmac('sha256', key).update(`${req.headers['webhook-id']}.${ts}.`).update(req.body).digest('base64');
      expect(req.headers['webhook-signature']).toBe(`v1,${mac}`);
    });
  });

  describe('delivery rules', () => {
    it('a submission deleted before the worker gets to it is never sent: skipped', async () => {
      // Every send slot of the worker (FORWARD_CONCURRENCY, 16) held by a slow receiver: a new
      // row stays in the outbox until one comes free, 6 s later.
      const busyForm = await newForm('busy_form');
      rx.script('/busy', [{ status: 200, body: 'ok', delayMs: 6_000 }]);
      const busy = (await create({ xform: busyForm, name: 'generic_json', service_url: `${rx.url}/busy` }).expect(201)).body;
      await Promise.all(Array.from({ length: 16 }, (_, i) => submitJson({ name: `busy ${i}` }, busyForm)));
      const sending = async () => ((await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM rest_deliveries WHERE service_id = $1 AND status IN ('pending', 'retrying') AND lease_until IS NOT NULL`, [busy.id])) as Array<{ n: number }>)[0].n;
      await until('every send slot busy', async () => (await sending()) === 16);
      const form = await newForm('del_form');
      const svc = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/deleted` }).expect(201)).body;
      const sub = await submitJson({ name: 'Gone' }, form);
      await api().delete(`/api/v1/data/${form}/${sub._id}`).set('Authorization', owner.token).expect(204);
      expect(await sending()).toBe(16);
      const entries = await until('skipped entry', async () => { const l = await log(svc.id); return l.length && l; });
      expect(entries).toMatchObject([{ status: 'skipped', attempt: 1, status_code: null, error: 'submission deleted before delivery' }]);
      expect(rx.to('/deleted')).toHaveLength(0);
      // The receiver is every test's destination (8 connections at most): the slow deliveries end before the next test sends.
      await until('the slow deliveries done', async () => (await log(busy.id, 'success')).length === 16, 30_000);
    }, 60_000);

    it('503 three times then 200: delivered once, 4 attempts logged with one X-Delivery-Id', async () => {
      const form = await newForm('retry_form');
      rx.script('/flaky', [{ status: 503, body: 'busy' }, { status: 503 }, { status: 503 }, { status: 200, body: 'finally' }]);
      const svc = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/flaky` }).expect(201)).body;
      await submitJson({ name: 'Flaky' }, form);
      const entries = await until('4 attempts', async () => { const l = await log(svc.id); return l.length >= 4 && l.some((e) => e.status === 'success') && l; });
      expect(entries.map((e) => [e.attempt, e.status, e.status_code])).toEqual([[4, 'success', 200], [3, 'retrying', 503], [2, 'retrying', 503], [1, 'retrying', 503]]);
      expect(entries[3].response_excerpt).toBe('busy');
      const reqs = rx.to('/flaky');
      expect(reqs).toHaveLength(4);
      expect(new Set(reqs.map((r) => r.headers['x-delivery-id'])).size).toBe(1);
      expect(reqs.map((r) => r.headers['x-delivery-attempt'])).toEqual(['1', '2', '3', '4']);
      expect(await log(svc.id, 'retrying')).toHaveLength(3);
      expect((await api().get(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token)).body).toMatchObject({ last_status: 'success', failure_count: 0 });
    });

    it('400 fails at once; retry re-sends it; retry-failed re-sends every failed one', async () => {
      const form = await newForm('bad_form');
      rx.script('/reject', [{ status: 400, body: 'bad payload' }]);
      const svc = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/reject` }).expect(201)).body;
      await submitJson({ name: 'One' }, form);
      const [entry] = await until('failed entry', async () => { const l = await log(svc.id, 'failed'); return l.length && l; });
      expect(entry).toMatchObject({ attempt: 1, status: 'failed', status_code: 400, response_excerpt: 'bad payload' });
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.to('/reject')).toHaveLength(1);
      expect((await api().get(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token)).body).toMatchObject({ last_status: 'failed', failure_count: 1 });

      rx.script('/reject', [{ status: 200 }]);
      await api().post(`/api/v1/restservices/${svc.id}/deliveries/${entry.id}/retry`).set('Authorization', owner.token).expect(202);
      await until('retried success', async () => (await log(svc.id, 'success')).length === 1);
      expect(rx.to('/reject')[1].headers['x-delivery-id']).toBe(entry.delivery_id);
      expect(rx.to('/reject')[1].headers['x-delivery-attempt']).toBe('2');

      rx.script('/reject', [{ status: 422 }]);
      await submitJson({ name: 'Two' }, form);
      await submitJson({ name: 'Three' }, form);
      await until('two more failures', async () => (await log(svc.id, 'failed')).length === 3);
      rx.script('/reject', [{ status: 204 }]);
      expect((await api().post(`/api/v1/restservices/${svc.id}/retry-failed`).set('Authorization', owner.token).expect(202)).body).toEqual({ detail: 'Failed deliveries queued.', count: 2 });
      await until('all delivered', async () => (await log(svc.id, 'success')).length === 3);
      await api().post(`/api/v1/restservices/${svc.id}/deliveries/nope/retry`).set('Authorization', owner.token).expect(404);
      await api().get(`/api/v1/restservices/${svc.id}/deliveries`).query({ status: 'weird' }).set('Authorization', owner.token).expect(400);
    });

    it('410 deactivates the service; later submissions are not queued; PATCH active re-enables', async () => {
      const form = await newForm('gone_form');
      rx.script('/gone', [{ status: 410 }]);
      const svc = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/gone` }).expect(201)).body;
      await submitJson({ name: 'A' }, form);
      const after = await until('deactivated', async () => {
        const s = (await api().get(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token)).body;
        return s.active === false && s;
      });
      expect(after.inactive_reason).toMatch(/410/);
      expect(await log(svc.id)).toMatchObject([{ status: 'failed', status_code: 410 }]);
      await submitJson({ name: 'B' }, form);
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.to('/gone')).toHaveLength(1);
      const re = await api().patch(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token).send({ active: true }).expect(200);
      expect(re.body).toMatchObject({ active: true, inactive_reason: null });
    });

    it('retries a connection error, then fails after FORWARD_MAX_ATTEMPTS', async () => {
      const form = await newForm('down_form');
      const dead = await new Receiver().start();
      const deadUrl = dead.url;
      await dead.close();
      const svc = (await create({ xform: form, name: 'generic_json', service_url: `${deadUrl}/nobody` }).expect(201)).body;
      await submitJson({ name: 'X' }, form);
      const entries = await until('final failure', async () => { const l = await log(svc.id); return l.some((e) => e.status === 'failed') && l; }, 30_000);
      expect(entries).toHaveLength(8);
      expect(entries[0]).toMatchObject({ attempt: 8, status: 'failed', status_code: null, error: expect.stringContaining('ECONNREFUSED') });
      expect(entries.slice(1).every((e) => e.status === 'retrying')).toBe(true);
    });
  });

  it('exposes delivery counters by service and outcome at /metrics', async () => {
    const text = (await api().get('/metrics').expect(200)).text;
    expect(text).toMatch(/collect_restservice_deliveries_total\{service_id="\d+",service="generic_json",outcome="success"\} \d+/);
    expect(text).toMatch(/collect_restservice_deliveries_total\{service_id="\d+",service="generic_json",outcome="retrying"\} \d+/);
  });

  describe('SSRF guard', () => {
    it.each(['http://10.0.0.5/hook', 'http://169.254.169.254/latest/meta-data', 'http://192.168.1.10/x', 'http://[fd00::1]/x', 'http://0.0.0.0:80/'])('refuses %s at create', async (url) => {
      const res = await create({ name: 'generic_json', service_url: url }).expect(400);
      expect(res.body).toEqual({ service_url: [expect.stringContaining('Refused')] });
    });

    it('refuses at send time when the address is not allowed (DNS re-checked per request)', async () => {
      const strict = await startTestCollectApp({ ...FAST, FORWARD_ALLOW_PRIVATE_NETWORKS: '' }, { worker: true });
      try {
        const u = await createTestUser(strict.app);
        const form = (await request(strict.url).post('/api/v1/forms').set('Authorization', u.token).attach('xml_file', Buffer.from(demoXForm('ssrf_form')), 'form.xml').expect(201)).body.formid;
        expect((await request(strict.url).post('/api/v1/restservices').set('Authorization', u.token).send({ xform: form, name: 'generic_json', service_url: `${rx.url}/ssrf` }).expect(400)).body.service_url[0]).toMatch(/loopback/);
        // A name that resolved to a public address at create and to loopback now (rebinding).
        const svc = await strict.app.get(RestServicesRepository).saveService({ formId: form, name: 'generic_json', serviceUrl: `http://localhost:${new URL(rx.url).port}/ssrf`, options: {} });
        await request(strict.url).post('/api/v1/submissions').set('Authorization', u.token).send({ id: 'ssrf_form', submission: { name: 'S' } }).expect(201);
        const entries = await until('refused entry', async () => {
          const l = (await request(strict.url).get(`/api/v1/restservices/${svc!.id}/deliveries`).set('Authorization', u.token)).body;
          return l.length && l;
        });
        expect(entries[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('refused') });
        expect(rx.to('/ssrf')).toHaveLength(0);
      } finally {
        await strict.close();
      }
    });
  });
});
