import request from 'supertest';
import { DataSource } from 'typeorm';
import { demoXForm } from './forms-fixtures.js';
import { FAST_FORWARDING as FAST, type Receiver, until, type ReceivedRequest } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';
import type { TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** The value of a header as sent, by its exact name. */
function rawHeader(r: ReceivedRequest, name: string): string | undefined {
  for (let i = 0; i < r.rawHeaders.length; i += 2) if (r.rawHeaders[i] === name) return r.rawHeaders[i + 1];
  return undefined;
}

/**
 * Shaping and auth (docs/restservices.md): the `fields` subset of generic_json and generic_xml,
 * write-only extra headers and Basic credentials (seen byte-exact at a real receiver, never in
 * a response), and test-fire (the exact request, not a delivery, through the SSRF guard).
 */
describe('rest services: fields subset, extra headers, Basic credentials, test-fire', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;

  withWorkerAppAndReceiver(FAST, (suite) => void ({ sut, owner, rx } = suite));

  const api = () => request(sut.url);
  const newForm = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const create = (formId: number, body: Record<string, unknown>) => api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, ...body });
  const submit = async (idString: string, submission: Record<string, unknown>) =>
    (await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission }).expect(201)).body as { instanceID: string };
  const dataOf = async (formId: number) => (await api().get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;
  const attempts = async (serviceId: number) => Number(((await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM rest_delivery_attempts WHERE service_id = $1`, [serviceId])) as Array<{ n: number }>)[0].n);

  it('fields: generic_json sends only the chosen fields (a group selects its fields) plus every _ metadata field, byte-exact', async () => {
    const formId = await newForm('fields_json');
    const svc = (await create(formId, { name: 'generic_json', service_url: `${rx.url}/fields-json`, fields: ['name', 'household'] }).expect(201)).body;
    expect(svc.fields).toEqual(['name', 'household']);
    await submit('fields_json', { name: 'Ann', age: '33', household: { size: '4' }, member: [{ member_name: 'Bo' }] });
    const [received] = await until('the delivery', () => rx.to('/fields-json').length === 1 && rx.to('/fields-json'));
    const [stored] = await dataOf(formId);
    const expected = Object.fromEntries(Object.entries(stored).filter(([k]) => k.startsWith('_') || k === 'name' || k.startsWith('household/')));
    expect(Object.keys(expected)).toEqual(expect.arrayContaining(['name', 'household/size', '_id', '_uuid', '_attachments']));
    expect(received.body.toString('utf8')).toBe(JSON.stringify(expected));
    expect(received.body.toString('utf8')).not.toContain('"age"');
    expect(received.body.toString('utf8')).not.toContain('member_name');
  });

  it('fields: generic_xml renders the instance with only the chosen fields and its meta block', async () => {
    const formId = await newForm('fields_xml');
    await create(formId, { name: 'generic_xml', service_url: `${rx.url}/fields-xml`, fields: ['age', 'member/member_name'] }).expect(201);
    const ack = await submit('fields_xml', { name: 'Ann', age: '33', member: [{ member_name: 'Bo' }, { member_name: 'Cy' }] });
    const [received] = await until('the delivery', () => rx.to('/fields-xml').length === 1 && rx.to('/fields-xml'));
    const body = received.body.toString('utf8');
    expect(body).toContain('<age>33</age><member><member_name>Bo</member_name></member><member><member_name>Cy</member_name></member>');
    expect(body).not.toContain('<name>');
    expect(body).toContain(`<instanceID>${ack.instanceID}</instanceID>`);
    expect(body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><data [^>]*id="fields_xml"/);
  });

  it('fields: unknown xpaths, malformed ones and fields on other kinds', async () => {
    const formId = await newForm('fields_bad');
    expect((await create(formId, { name: 'generic_json', service_url: `${rx.url}/x1`, fields: ['nope'] }).expect(400)).body).toEqual({ fields: ['Not fields of this form: nope.'] });
    expect((await create(formId, { name: 'generic_json', service_url: `${rx.url}/x1`, fields: ['a//b'] }).expect(400)).body.fields).toBeDefined();
    expect((await create(formId, { name: 'generic_json', service_url: `${rx.url}/x1`, fields: 'name' }).expect(400)).body.fields).toBeDefined();
    // Not a field of messaging: dropped, as other kinds' fields are.
    const m = (await create(formId, { name: 'messaging', service_url: `${rx.url}/x2`, auth_token: 't', flow_uuid: 'f', contacts: 'c', fields: ['name'] }).expect(201)).body;
    expect(m.fields).toBeUndefined();
    // PATCH null sends every field again.
    const j = (await create(formId, { name: 'generic_json', service_url: `${rx.url}/x3`, fields: ['name'] }).expect(201)).body;
    expect((await api().patch(`/api/v1/restservices/${j.id}`).set('Authorization', owner.token).send({ fields: null }).expect(200)).body.fields).toBeNull();
  });

  it('extra headers and Basic credentials arrive byte-exact and are never answered back', async () => {
    const formId = await newForm('auth_headers');
    const bearer = 'Bearer hdr-secret-0f9e8d7c6b5a';
    const apiKey = 'key-secret-1a2b3c4d5e6f';
    const password = 'B4sic-pa55:with-colon é';
    const h = await create(formId, { name: 'generic_json', service_url: `${rx.url}/hdr`, headers: { Authorization: bearer, 'X-Api-Key': apiKey } }).expect(201);
    const b = await create(formId, { name: 'generic_xml', service_url: `${rx.url}/basic`, basic_auth_username: 'receiver-user', basic_auth_password: password }).expect(201);
    for (const res of [h, b]) expect(JSON.stringify(res.body)).not.toMatch(/hdr-secret|key-secret|B4sic-pa55/);
    expect(h.body.header_names).toEqual(['Authorization', 'X-Api-Key']);
    expect(h.body.basic_auth_enabled).toBe(false);
    expect(b.body.basic_auth_enabled).toBe(true);
    expect(b.body.header_names).toEqual([]);
    await submit('auth_headers', { name: 'Ann' });
    const [hr] = await until('the header delivery', () => rx.to('/hdr').length === 1 && rx.to('/hdr'));
    const [br] = await until('the Basic delivery', () => rx.to('/basic').length === 1 && rx.to('/basic'));
    expect(rawHeader(hr, 'Authorization')).toBe(bearer);
    expect(rawHeader(hr, 'X-Api-Key')).toBe(apiKey);
    expect(rawHeader(br, 'Authorization')).toBe(`Basic ${Buffer.from(`receiver-user:${password}`, 'utf8').toString('base64')}`);
    // Stored encrypted: the clear values are nowhere in the row.
    const rows = (await sut.app.get(DataSource).query(`SELECT row_to_json(s)::text AS t FROM rest_services s WHERE form_id = $1`, [formId])) as Array<{ t: string }>;
    for (const r of rows) expect(r.t).not.toMatch(/hdr-secret|key-secret|B4sic-pa55/);
    // Reads, lists and a PATCH that leaves them alone never show them; the deliveries still carry them.
    const reads = [
      await api().get(`/api/v1/restservices/${h.body.id}`).set('Authorization', owner.token).expect(200),
      await api().get(`/api/v1/restservices?xform=${formId}`).set('Authorization', owner.token).expect(200),
      await api().patch(`/api/v1/restservices/${b.body.id}`).set('Authorization', owner.token).send({ service_url: `${rx.url}/basic2` }).expect(200),
      await api().get(`/api/v1/restservices/${h.body.id}/deliveries`).set('Authorization', owner.token).expect(200),
    ];
    for (const r of reads) expect(r.text).not.toMatch(/hdr-secret|key-secret|B4sic-pa55|cmVjZWl2ZXItdXNlcj/);
    await submit('auth_headers', { name: 'Bo' });
    const [b2] = await until('the Basic delivery after PATCH', () => rx.to('/basic2').length === 1 && rx.to('/basic2'));
    expect(rawHeader(b2, 'Authorization')).toBe(rawHeader(br, 'Authorization'));
    // null removes them.
    const cleared = await api().patch(`/api/v1/restservices/${h.body.id}`).set('Authorization', owner.token).send({ headers: null }).expect(200);
    expect(cleared.body.header_names).toEqual([]);
    const noBasic = await api().patch(`/api/v1/restservices/${b.body.id}`).set('Authorization', owner.token).send({ basic_auth_username: null }).expect(200);
    expect(noBasic.body.basic_auth_enabled).toBe(false);
  });

  it('refuses headers it may not set, malformed ones, half Basic credentials and a second Authorization', async () => {
    const formId = await newForm('auth_bad');
    const refuse = async (body: Record<string, unknown>, field: string) => {
      const res = await create(formId, { name: 'generic_json', service_url: `${rx.url}/bad`, ...body }).expect(400);
      expect(Object.keys(res.body)).toEqual([field]);
      expect(JSON.stringify(res.body)).not.toContain('s3cret-value');
      return res.body[field][0] as string;
    };
    for (const name of ['Host', 'content-length', 'Content-Type', 'Transfer-Encoding', 'webhook-id', 'Webhook-Signature', 'X-Delivery-Id', 'x-delivery-attempt']) {
      expect(await refuse({ headers: { [name]: 's3cret-value' } }, 'headers')).toBe(`The header "${name}" cannot be set.`);
    }
    expect(await refuse({ headers: { 'bad name': 's3cret-value' } }, 'headers')).toContain('not a valid header name');
    expect(await refuse({ headers: { 'X-A': 's3cret-value\r\nX-B: 1' } }, 'headers')).toContain('line breaks');
    expect(await refuse({ headers: { 'X-A': 5 } }, 'headers')).toContain('must be a string');
    expect(await refuse({ headers: ['X-A'] }, 'headers')).toBeTruthy();
    expect(await refuse({ basic_auth_username: 'u' }, 'basic_auth_password')).toContain('required');
    expect(await refuse({ basic_auth_password: 's3cret-value' }, 'basic_auth_username')).toContain('required');
    expect(await refuse({ basic_auth_username: 'a:b', basic_auth_password: 's3cret-value' }, 'basic_auth_username')).toContain(':');
    expect(await refuse({ basic_auth_username: 'u', basic_auth_password: 's3cret-value', headers: { authorization: 's3cret-value' } }, 'headers')).toContain('Basic');
    const msg = await create(formId, { name: 'messaging', service_url: `${rx.url}/bad`, auth_token: 't', flow_uuid: 'f', contacts: 'c', headers: { Authorization: 's3cret-value' } }).expect(400);
    expect(msg.body.headers[0]).toContain('auth_token');
  });

  it('test-fire sends the newest submission once, answers the exact request with secrets masked, and is not a delivery', async () => {
    const formId = await newForm('fire');
    const secretKey = 'fire-secret-778899';
    const svc = (await create(formId, { name: 'generic_json', service_url: `${rx.url}/fire`, headers: { 'X-Api-Key': secretKey, 'X-Plain': 'p' }, basic_auth_username: 'u', basic_auth_password: 'fire-pass-445566' }).expect(201)).body;
    rx.script('/fire', [{ status: 202, body: '{"accepted":true}' }]);
    // An empty form: a made-up submission of the form's shape.
    const synthetic = await api().post(`/api/v1/restservices/${svc.id}/test`).set('Authorization', owner.token).expect(200);
    expect(rx.to('/fire')).toHaveLength(1);
    const sent = JSON.parse(rx.to('/fire')[0].body.toString()) as Record<string, unknown>;
    expect(sent).toMatchObject({ _id: 0, name: 'test', age: '1', _xform_id_string: 'fire' });
    expect(synthetic.body.request.body).toBe(rx.to('/fire')[0].body.toString());

    await submit('fire', { name: 'Newest', age: '7' });
    await until('the delivery of the submission', () => rx.to('/fire').length === 2);
    // Its attempt is logged after the receiver answered.
    await until('the delivery logged', async () => (await attempts(svc.id)) === 1);
    const before = await attempts(svc.id);
    const fired = await api().post(`/api/v1/restservices/${svc.id}/test`).set('Authorization', owner.token).expect(200);
    expect(rx.to('/fire')).toHaveLength(3);
    const received = rx.to('/fire')[2];
    const [stored] = await dataOf(formId);
    expect(received.body.toString('utf8')).toBe(JSON.stringify(stored));
    expect(fired.body).toEqual({
      request: { method: 'POST', url: `${rx.url}/fire`, headers: expect.any(Object), body: received.body.toString('utf8') },
      response: { status: 202, body_excerpt: '{"accepted":true}' },
      error: null,
    });
    // Every header the receiver got is in the answer, values equal except the masked secrets.
    const shown = fired.body.request.headers as Record<string, string>;
    for (let i = 0; i < received.rawHeaders.length; i += 2) {
      const [name, value] = [received.rawHeaders[i], received.rawHeaders[i + 1]];
      if (['host', 'connection'].includes(name.toLowerCase())) continue;
      // The extra headers are write-only: every value is masked, not only the secret-looking ones.
      if (name === 'X-Api-Key' || name === 'X-Plain') expect(shown[name]).toBe('********');
      else if (name === 'Authorization') expect(shown[name]).toBe('Basic ********');
      else expect([name, shown[name]]).toEqual([name, value]);
    }
    expect(rawHeader(received, 'X-Api-Key')).toBe(secretKey);
    expect(fired.text).not.toMatch(/fire-secret|fire-pass|dTpmaXJlLXBhc3/);
    // Not a delivery: no attempt logged; a failing answer is not retried.
    expect(await attempts(svc.id)).toBe(before);
    rx.script('/fire', [{ status: 500, body: 'down' }]);
    const failed = await api().post(`/api/v1/restservices/${svc.id}/test`).set('Authorization', owner.token).expect(200);
    expect(failed.body.response).toEqual({ status: 500, body_excerpt: 'down' });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.to('/fire')).toHaveLength(4);
    expect(await attempts(svc.id)).toBe(before);
  });

  it('test-fire goes through the SSRF guard and is 404 for a stranger and unknown services', async () => {
    const formId = await newForm('fire_guard');
    const svc = (await create(formId, { name: 'generic_json', service_url: `${rx.url}/guard` }).expect(201)).body;
    // The address changed behind the API's back (as a DNS answer may): the request is refused before connecting.
    await sut.app.get(DataSource).query(`UPDATE rest_services SET service_url = 'http://169.254.169.254/latest/meta-data' WHERE id = $1`, [svc.id]);
    const refused = await api().post(`/api/v1/restservices/${svc.id}/test`).set('Authorization', owner.token).expect(200);
    expect(refused.body.response).toBeNull();
    expect(refused.body.error).toMatch(/^refused: 169\.254\.169\.254 is a loopback, private, link-local or reserved address/);
    const stranger = await createTestUser(sut.app);
    await api().post(`/api/v1/restservices/${svc.id}/test`).set('Authorization', stranger.token).expect(404);
    await api().post('/api/v1/restservices/999999/test').set('Authorization', owner.token).expect(404);
    await api().post('/api/v1/restservices/abc/test').set('Authorization', owner.token).expect(404);
  });

  it('_bamboo_dataset_id: the id the dataset service answers is stored and shows in the data API and later payloads', async () => {
    const formId = await newForm('bamboo');
    rx.script('/dataset', [{ status: 201, headers: { 'Content-Type': 'application/json' }, body: '{"id":"ds-4242"}' }]);
    await create(formId, { name: 'dataset_service', service_url: `${rx.url}/dataset` }).expect(201);
    await submit('bamboo', { name: 'Ann' });
    await until('the dataset id stored', async () => (await dataOf(formId))[0]._bamboo_dataset_id === 'ds-4242');
    // A service added later sends it (test-fire sends what a delivery would).
    const later = (await create(formId, { name: 'generic_json', service_url: `${rx.url}/after-bamboo` }).expect(201)).body;
    const fired = await api().post(`/api/v1/restservices/${later.id}/test`).set('Authorization', owner.token).expect(200);
    expect(JSON.parse(fired.body.request.body)._bamboo_dataset_id).toBe('ds-4242');
    // A configured dataset_id wins over the answer.
    const formId2 = await newForm('bamboo_cfg');
    await create(formId2, { name: 'dataset_service', service_url: `${rx.url}/dataset`, dataset_id: 'configured-7' }).expect(201);
    await submit('bamboo_cfg', { name: 'Bo' });
    await until('the configured id stored', async () => (await dataOf(formId2))[0]._bamboo_dataset_id === 'configured-7');
  });

  it('_bamboo_dataset_id is the form\'s: once answered, every later submission carries it in its payloads and data rows', async () => {
    const formId = await newForm('bamboo_form');
    // The first delivery gets the id; later ones get no id in the answer.
    rx.script('/dataset-form', [{ status: 201, headers: { 'Content-Type': 'application/json' }, body: '{"id":"ds-form-1"}' }, { status: 200, body: 'ok' }]);
    await create(formId, { name: 'dataset_service', service_url: `${rx.url}/dataset-form` }).expect(201);
    await submit('bamboo_form', { name: 'Ann' });
    await until('the answered id stored', async () => (await dataOf(formId))[0]._bamboo_dataset_id === 'ds-form-1');
    await create(formId, { name: 'generic_json', service_url: `${rx.url}/bamboo-later` }).expect(201);
    await submit('bamboo_form', { name: 'Bo' });
    const [received] = await until('the later submission delivered', () => rx.to('/bamboo-later').length === 1 && rx.to('/bamboo-later'));
    expect(JSON.parse(received.body.toString('utf8'))).toMatchObject({ name: 'Bo', _bamboo_dataset_id: 'ds-form-1' });
    await until('its dataset delivery answered', () => rx.to('/dataset-form').length === 2);
    expect((await dataOf(formId)).map((row) => [row.name, row._bamboo_dataset_id])).toEqual([['Ann', 'ds-form-1'], ['Bo', 'ds-form-1']]);
  });

  it('_bamboo_dataset_id: a configured dataset_id is the form\'s at once, before any delivery succeeds', async () => {
    const formId = await newForm('bamboo_configured');
    rx.script('/dataset-refusing', [{ status: 400, body: 'no' }]);
    await create(formId, { name: 'dataset_service', service_url: `${rx.url}/dataset-refusing`, dataset_id: 'cfg-9' }).expect(201);
    await submit('bamboo_configured', { name: 'Cy' });
    await until('the refused delivery', () => rx.to('/dataset-refusing').length === 1);
    expect((await dataOf(formId))[0]._bamboo_dataset_id).toBe('cfg-9');
  });

  it('Prometheus: deliveries and test-fires by kind and outcome', async () => {
    const metrics = (await api().get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/^collect_restservice_deliveries_total\{service_id="\d+",service="generic_json",outcome="success"\} \d+/m);
    expect(metrics).toMatch(/^collect_restservice_deliveries_total\{service_id="\d+",service="dataset_service",outcome="success"\} \d+/m);
    expect(metrics).toMatch(/^collect_restservice_test_fires_total\{service="generic_json",outcome="success"\} [1-9]/m);
    expect(metrics).toMatch(/^collect_restservice_test_fires_total\{service="generic_json",outcome="failed"\} [1-9]/m);
    expect(metrics).toMatch(/^collect_restservice_delivery_seconds_bucket\{le="[^"]+",service="generic_json"\} \d+/m);
  });

  it('health: success_rate_24h and p95_latency_ms_24h from the delivery log', async () => {
    const formId = await newForm('health');
    rx.script('/health-rx', [{ status: 500, body: 'x' }, { status: 200, body: 'ok' }]);
    const svc = (await create(formId, { name: 'generic_json', service_url: `${rx.url}/health-rx` }).expect(201)).body;
    expect(svc.success_rate_24h).toBeNull();
    expect(svc.p95_latency_ms_24h).toBeNull();
    await submit('health', { name: 'a' });
    await until('two attempts', async () => (await attempts(svc.id)) === 2);
    const read = (await api().get(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token).expect(200)).body;
    expect(read.success_rate_24h).toBe(0.5);
    expect(read.p95_latency_ms_24h).toEqual(expect.any(Number));
    // Attempts older than 24 h do not count.
    await sut.app.get(DataSource).query(`UPDATE rest_delivery_attempts SET created_at = now() - interval '25 hours' WHERE service_id = $1 AND status = 'retrying'`, [svc.id]);
    expect((await api().get(`/api/v1/restservices?xform=${formId}`).set('Authorization', owner.token).expect(200)).body[0].success_rate_24h).toBe(1);
  });
});
