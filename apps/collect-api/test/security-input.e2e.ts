import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { sendPartByPart } from './streamed-body.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Parsers of user input (capped, the role checked before a large body is read) and the
 * prototype-named keys, over HTTP against the real app. The linear-time property
 * itself is checked per parser in src/openrosa/parsers-complexity.spec.ts.
 */

const PROTO_NAMES = ['constructor', '__proto__', 'isPrototypeOf', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];

/** An XForm whose questions, group and repeat carry the prototype names. */
function protoXForm(idString: string): string {
  const leaves = PROTO_NAMES.map((n) => `<${n}/>`).join('');
  return `<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa">
<h:head><h:title>Proto</h:title><model><instance><data id="${idString}">${leaves}<valueOf_group><toString/></valueOf_group><isPrototypeOf_rep jr:template=""><constructor/></isPrototypeOf_rep><meta><instanceID/></meta></data></instance>
<bind nodeset="/data/constructor" type="constructor"/><bind nodeset="/data/toString" type="toString"/><bind nodeset="/data/__proto__" type="int"/>
</model></h:head><h:body>${PROTO_NAMES.map((n) => `<input ref="/data/${n}"><label>${n}</label></input>`).join('')}
<repeat nodeset="/data/isPrototypeOf_rep"><input ref="/data/isPrototypeOf_rep/constructor"/></repeat></h:body></h:html>`;
}

describe('security: parsers of user input', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;

  beforeAll(async () => {
    sut = await startTestCollectApp({ FORM_MAX_FIELDS: '40', INPUT_MAX_NODES: '400', INPUT_MAX_DEPTH: '12', SUBMISSION_XML_MAX_BYTES: '1048576' });
    owner = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  const api = () => request(sut.url);

  it('a form over FORM_MAX_FIELDS: 413 {"detail"} naming the variable (XForm and JSON), nothing stored', async () => {
    const names = Array.from({ length: 41 }, (_, i) => `q${i}`);
    const xml = `<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml"><h:head><h:title>t</h:title><model><instance><data id="too_many">${names.map((n) => `<${n}/>`).join('')}</data></instance></model></h:head><h:body/></h:html>`;
    const res = await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(xml).expect(413);
    expect(res.body).toEqual({ detail: 'The form has more than 40 fields (FORM_MAX_FIELDS).' });
    // Over 100,000 characters the XForm is read in a worker thread (XlsFormConversion): the same cap, the same 413.
    const large = await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(xml.replace('<h:title>t</h:title>', `<h:title>${'t'.repeat(120_000)}</h:title>`)).expect(413);
    expect(large.body).toEqual({ detail: 'The form has more than 40 fields (FORM_MAX_FIELDS).' });
    const json = await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: 'too_many_json', fields: names.map((name) => ({ name, type: 'text' })) }).expect(413);
    expect(json.body.detail).toContain('FORM_MAX_FIELDS');
    expect((await api().get('/api/v1/forms').set('Authorization', owner.token).expect(200)).body).toEqual([]);
    // At the limit it is accepted.
    await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: 'just_enough', fields: names.slice(0, 40).map((name) => ({ name, type: 'text' })) }).expect(201);
  });

  it('an XML document over INPUT_MAX_NODES: 413; nested deeper than INPUT_MAX_DEPTH: 400 (forms and submissions)', async () => {
    const big = `<h:html xmlns:h="http://www.w3.org/1999/xhtml">${'<x/>'.repeat(401)}</h:html>`;
    const res = await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(big).expect(413);
    expect(res.body).toEqual({ detail: 'The XML document has more than 400 elements or values (INPUT_MAX_NODES).' });
    const deep = `<h:html xmlns:h="http://www.w3.org/1999/xhtml">${'<g>'.repeat(20)}${'</g>'.repeat(20)}</h:html>`;
    const deepRes = await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(deep).expect(400);
    expect(deepRes.body.xml_file[0]).toContain('INPUT_MAX_DEPTH');

    await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm('limits_form')).expect(201);
    const instance = demoInstance({ instanceId: 'many', idString: 'limits_form', members: Array.from({ length: 200 }, (_, i) => `m${i}`) });
    const sub = await api().post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(instance), 'submission.xml').expect(413);
    expect(sub.body.detail).toContain('INPUT_MAX_NODES');
    const json = await api().post('/api/v1/submissions').set('Authorization', owner.token)
      .send({ id: 'limits_form', submission: { member: Array.from({ length: 401 }, (_, i) => ({ member_name: `m${i}` })) } }).expect(413);
    expect(json.body.detail).toContain('INPUT_MAX_NODES');
    let nested: Record<string, unknown> = { q: 'v' };
    for (let i = 0; i < 20; i++) nested = { g: nested };
    const deepJson = await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'limits_form', submission: nested }).expect(400);
    expect(deepJson.body.submission[0]).toContain('nested too deeply');
    const data = await api().get('/api/v1/forms').set('Authorization', owner.token).expect(200);
    expect(data.body.find((f: { id_string: string }) => f.id_string === 'limits_form').num_of_submissions).toBe(0);
  });

  it('OpenRosa: a caller who may not submit is answered after the XML part, before the attachments are read or stored', async () => {
    const form = await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm('readers_only')).expect(201);
    await api().put(`/api/v1/forms/${form.body.formid}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    const xml = demoInstance({ instanceId: 'refused', idString: 'readers_only' });
    const head = Buffer.from(
      `--BOUNDARY\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n` +
        `--BOUNDARY\r\nContent-Disposition: form-data; name="house.jpg"; filename="house.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const tail = Buffer.from('\r\n--BOUNDARY--\r\n');
    const parts = [head, ...Array.from({ length: 1024 }, () => chunk), tail]; // a 64 MiB attachment
    const total = parts.reduce((n, p) => n + p.length, 0);
    const answer = await sendPartByPart(sut.url, '/submission', { Authorization: reader.token, 'Content-Type': 'multipart/form-data; boundary=BOUNDARY', 'X-OpenRosa-Version': '1.0' }, parts);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ detail: 'You do not have permission to perform this action.' });
    expect(answer.connection).toBe('close');
    // Answered long before the body ended: the server stopped reading it.
    expect(answer.sentBytes).toBeLessThan(total / 4);
    expect(readdirSync(sut.config.UPLOAD_TMP_DIR).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('a raw XForm body announced larger than FORM_MAX_BYTES is refused before it is read (413, connection closed)', async () => {
    const { hostname, port } = new URL(sut.url);
    const answer = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: hostname, port, method: 'POST', path: '/api/v1/forms', headers: { Authorization: owner.token, 'Content-Type': 'application/xml', 'Content-Length': String(sut.config.FORM_MAX_BYTES + 1) } });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      });
      req.on('error', reject);
      // Only the first bytes are sent: the answer must not wait for the rest.
      req.write('<h:html>');
    });
    expect(answer.status).toBe(413);
    expect(answer.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ detail: `The body is larger than ${sut.config.FORM_MAX_BYTES} bytes.` });
  });

  it('OpenRosa: an attachment part before the XML part is refused (400), not spooled', async () => {
    await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm('order_form')).expect(201);
    const res = await api().post('/submission').set('Authorization', owner.token)
      .attach('house.jpg', Buffer.alloc(1000, 1), 'house.jpg')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'order', idString: 'order_form' })), 'submission.xml')
      .expect(400);
    expect(res.body).toEqual({ xml_submission_file: ['The xml_submission_file part must come before the attachments.'] });
    expect(readdirSync(sut.config.UPLOAD_TMP_DIR).filter((f) => f.endsWith('.part'))).toEqual([]);
    // The usual order still works, attachments included.
    await api().post('/submission').set('Authorization', owner.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'order', idString: 'order_form' })), 'submission.xml')
      .attach('house.jpg', Buffer.alloc(1000, 1), 'house.jpg')
      .expect(201);
  });

  describe('prototype-named elements and keys are data', () => {
    it('an XForm with questions named constructor, __proto__, isPrototypeOf, ... is stored with every field', async () => {
      const res = await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(protoXForm('proto_x')).expect(201);
      const fields = (await api().get(`/api/v1/forms/${res.body.formid}/fields`).set('Authorization', owner.token).expect(200)).body as Array<{ xpath: string; type: string }>;
      expect(fields.map((f) => f.xpath)).toEqual([...PROTO_NAMES, 'valueOf_group', 'valueOf_group/toString', 'isPrototypeOf_rep', 'isPrototypeOf_rep/constructor']);
      expect(fields.find((f) => f.xpath === 'constructor')!.type).toBe('constructor');
      expect(fields.find((f) => f.xpath === '__proto__')!.type).toBe('integer');
    });

    it('a JSON form definition with prototype names and types: names kept, unknown types 400', async () => {
      const ok = await api().post('/api/v1/forms').set('Authorization', owner.token)
        .send({ id_string: 'proto_j', fields: [...PROTO_NAMES.map((name) => ({ name, type: 'text' })), { name: 'hasOwnProperty_rep', type: 'repeat', children: [{ name: 'constructor', type: 'integer' }] }] })
        .expect(201);
      const fields = (await api().get(`/api/v1/forms/${ok.body.formid}/fields`).set('Authorization', owner.token).expect(200)).body as Array<{ xpath: string }>;
      expect(fields.map((f) => f.xpath)).toContain('hasOwnProperty_rep/constructor');
      for (const type of ['constructor', 'toString', '__proto__']) {
        const bad = await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: `proto_t${type.length}`, fields: [{ name: 'q', type }] }).expect(400);
        expect(bad.body.fields[0]).toMatch(/unknown type/i);
      }
    });

    it('sibling repeat elements and leaves with prototype names: 201 over OpenRosa and JSON, every answer kept', async () => {
      await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(protoXForm('proto_s')).expect(201);
      const siblings = PROTO_NAMES.map((n) => `<${n}><a>1</a></${n}><${n}><a>2</a></${n}>`).join('');
      const xml = `<data id="proto_s">${siblings}<valueOf_group><toString>t</toString></valueOf_group><isPrototypeOf_rep><constructor>c1</constructor></isPrototypeOf_rep><isPrototypeOf_rep><constructor>c2</constructor></isPrototypeOf_rep><meta><instanceID>uuid:proto-1</instanceID></meta></data>`;
      await api().post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(xml), 'submission.xml').expect(201);
      const json = { ...Object.fromEntries(PROTO_NAMES.map((n) => [n, `v-${n}`])), isPrototypeOf_rep: [{ constructor: 'j1' }, { constructor: 'j2' }], valueOf_group: { toString: 'jt' }, meta: { instanceID: 'uuid:proto-2' } };
      // Object.fromEntries made "__proto__" an own key: the body carries it as any client would send
      // it. At the top it is skipped like every `_` key (metadata of the output); inside a group it is an answer.
      const body = JSON.stringify({ id: 'proto_s', submission: json }).replace('"toString":"jt"', '"toString":"jt","__proto__":"in-group"');
      expect(body).toContain('"__proto__":"v-__proto__"');
      await api().post('/api/v1/submissions').set('Authorization', owner.token).set('Content-Type', 'application/json').send(body).expect(201);
      const forms = (await api().get('/api/v1/forms').set('Authorization', owner.token).expect(200)).body as Array<{ id_string: string; formid: number }>;
      const formId = forms.find((f) => f.id_string === 'proto_s')!.formid;
      const data = (await api().get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;
      const fromXml = data.find((d) => d._uuid === 'proto-1')!;
      for (const n of PROTO_NAMES) expect(Object.prototype.hasOwnProperty.call(fromXml, n) && fromXml[n]).toEqual([{ [`${n}/a`]: '1' }, { [`${n}/a`]: '2' }]);
      expect(fromXml['valueOf_group/toString']).toBe('t');
      expect(fromXml.isPrototypeOf_rep).toEqual([{ 'isPrototypeOf_rep/constructor': 'c1' }, { 'isPrototypeOf_rep/constructor': 'c2' }]);
      const fromJson = data.find((d) => d._uuid === 'proto-2')!;
      expect(Object.getOwnPropertyDescriptor(fromJson, 'valueOf_group/__proto__')?.value).toBe('in-group');
      expect(fromJson['valueOf_group/toString']).toBe('jt');
      expect(fromJson.constructor).toBe('v-constructor');
      expect(fromJson.isPrototypeOf_rep).toEqual([{ 'isPrototypeOf_rep/constructor': 'j1' }, { 'isPrototypeOf_rep/constructor': 'j2' }]);
    });
  });
});
