import request from 'supertest';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

const ROLES = ['owner', 'manager', 'editor', 'dataentry', 'readonly'] as const;
const WHO = [...ROLES, 'stranger', 'anonymous'] as const;
type Who = (typeof WHO)[number];

const SIMPLE = { id_string: 'matrix', title: 'Matrix', fields: [{ name: 'q', type: 'text', label: 'Q' }, { name: 'g', type: 'group', label: 'G', children: [{ name: 'n', type: 'integer' }] }] };

describe('forms: create, read, share, delete; permission matrix of docs/api-conventions.md', () => {
  let sut: TestCollectApp;
  const users = {} as Record<Exclude<Who, 'anonymous'>, TestUser>;
  const as = (who: Who, r: request.Test) => (who === 'anonymous' ? r : r.set('Authorization', users[who].token));

  beforeAll(async () => {
    sut = await startTestCollectApp();
    for (const who of WHO) if (who !== 'anonymous') users[who] = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  /** A fresh form owned by `owner`, shared with each role user, with one submission. */
  async function sharedForm(idString: string): Promise<{ formId: number; submissionId: number }> {
    const created = await as('owner', request(sut.url).post('/api/v1/forms')).send({ ...SIMPLE, id_string: idString }).expect(201);
    const formId = created.body.formid as number;
    for (const role of ROLES.slice(1)) await as('owner', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: users[role].username, role }).expect(204);
    await as('owner', request(sut.url).post('/api/v1/submissions')).send({ id: idString, submission: { q: 'x', g: { n: 1 } } }).expect(201);
    const data = await as('owner', request(sut.url).get(`/api/v1/data/${formId}`)).expect(200);
    return { formId, submissionId: data.body[0]._id };
  }

  async function matrix(make: (who: Who, ctx: { formId: number; submissionId: number; i: number }) => request.Test | Promise<request.Test>, fresh: boolean): Promise<Record<Who, number>> {
    const out = {} as Record<Who, number>;
    let shared: { formId: number; submissionId: number } | null = null;
    let i = 0;
    for (const who of WHO) {
      i++;
      const ctx = fresh ? await sharedForm(`f${Date.now().toString(36)}${i}`) : (shared ??= await sharedForm(`shared${Math.random().toString(36).slice(2, 8)}`));
      out[who] = (await make(who, { ...ctx, i })).status;
    }
    return out;
  }

  it('GET /api/v1/forms/{pk}, form.xml, fields, data list and one record: readonly and above', async () => {
    const expected = { owner: 200, manager: 200, editor: 200, dataentry: 200, readonly: 200, stranger: 404, anonymous: 401 };
    expect(await matrix((who, c) => as(who, request(sut.url).get(`/api/v1/forms/${c.formId}`)), false)).toEqual(expected);
    expect(await matrix((who, c) => as(who, request(sut.url).get(`/api/v1/forms/${c.formId}/form.xml`)), false)).toEqual(expected);
    expect(await matrix((who, c) => as(who, request(sut.url).get(`/api/v1/forms/${c.formId}/fields`)), false)).toEqual(expected);
    expect(await matrix((who, c) => as(who, request(sut.url).get(`/api/v1/data/${c.formId}`)), false)).toEqual(expected);
    expect(await matrix((who, c) => as(who, request(sut.url).get(`/api/v1/data/${c.formId}/${c.submissionId}`)), false)).toEqual(expected);
  });

  it('POST /api/v1/submissions: dataentry and above', async () => {
    const out = {} as Record<Who, number>;
    const { formId } = await sharedForm('submitmatrix');
    for (const who of WHO) out[who] = (await as(who, request(sut.url).post('/api/v1/submissions')).send({ id: 'submitmatrix', submission: { q: who } })).status;
    expect(out).toEqual({ owner: 201, manager: 201, editor: 201, dataentry: 201, readonly: 403, stranger: 404, anonymous: 401 });
    const data = await as('owner', request(sut.url).get(`/api/v1/data/${formId}`)).expect(200);
    expect(data.body).toHaveLength(5); // the one sharedForm made + owner, manager, editor, dataentry
  });

  it('edit by meta/deprecatedID: editor and above (dataentry 403, nothing changed)', async () => {
    const out = {} as Record<Who, number>;
    let n = 0;
    for (const who of WHO) {
      const idString = `edit${++n}`;
      await sharedForm(idString);
      await as('owner', request(sut.url).post('/api/v1/submissions')).send({ id: idString, submission: { q: 'v1', meta: { instanceID: `uuid:e-${n}` } } }).expect(201);
      out[who] = (await as(who, request(sut.url).post('/api/v1/submissions')).send({ id: idString, submission: { q: 'v2', meta: { instanceID: `uuid:e-${n}-b`, deprecatedID: `uuid:e-${n}` } } })).status;
    }
    expect(out).toEqual({ owner: 201, manager: 201, editor: 201, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 });
  });

  it('DELETE /api/v1/data/{pk}/{id}: editor and above', async () => {
    expect(await matrix((who, c) => as(who, request(sut.url).delete(`/api/v1/data/${c.formId}/${c.submissionId}`)), true)).toEqual({
      owner: 204, manager: 204, editor: 204, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401,
    });
  });

  it('PATCH /api/v1/forms/{pk}, PUT share, DELETE /api/v1/forms/{pk}: manager and above', async () => {
    const expected = (ok: number) => ({ owner: ok, manager: ok, editor: 403, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 });
    expect(await matrix((who, c) => as(who, request(sut.url).patch(`/api/v1/forms/${c.formId}`)).send({ title: 'New' }), true)).toEqual(expected(200));
    const target = await createTestUser(sut.app);
    expect(await matrix((who, c) => as(who, request(sut.url).put(`/api/v1/forms/${c.formId}/share`)).send({ username: target.username, role: 'readonly' }), true)).toEqual(expected(204));
    expect(await matrix((who, c) => as(who, request(sut.url).delete(`/api/v1/forms/${c.formId}`)), true)).toEqual(expected(204));
  });

  it('POST /api/v1/dataviews: editor and above', async () => {
    expect(await matrix((who, c) => as(who, request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: c.formId, columns: ['q'], query: [] }), false)).toEqual({
      owner: 201, manager: 201, editor: 201, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401,
    });
  });

  it('dataviews: GET and /data readonly and above; PATCH and DELETE editor and above', async () => {
    const view = async (formId: number) =>
      (await as('owner', request(sut.url).post('/api/v1/dataviews')).send({ name: 'v', xform: formId, columns: ['q'], query: [{ column: 'q', filter: '=', value: 'x' }] }).expect(201)).body.id as number;
    const read = { owner: 200, manager: 200, editor: 200, dataentry: 200, readonly: 200, stranger: 404, anonymous: 401 };
    const write = (ok: number) => ({ owner: ok, manager: ok, editor: ok, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 });
    expect(await matrix(async (who, c) => as(who, request(sut.url).get(`/api/v1/dataviews/${await view(c.formId)}`)), false)).toEqual(read);
    expect(await matrix(async (who, c) => as(who, request(sut.url).get(`/api/v1/dataviews/${await view(c.formId)}/data`)), false)).toEqual(read);
    expect(await matrix(async (who, c) => as(who, request(sut.url).patch(`/api/v1/dataviews/${await view(c.formId)}`)).send({ name: 'w' }), false)).toEqual(write(200));
    expect(await matrix(async (who, c) => as(who, request(sut.url).delete(`/api/v1/dataviews/${await view(c.formId)}`)), false)).toEqual(write(204));
  });

  it('merged datasets: visible with every form visible; delete by creator or managers of every form', async () => {
    const a = await sharedForm('mergeda');
    const b = await sharedForm('mergedb');
    const out = { get: {} as Record<Who, number>, del: {} as Record<Who, number> };
    for (const who of WHO) {
      const id = (await as('owner', request(sut.url).post('/api/v1/merged-datasets')).send({ name: 'm', xforms: [a.formId, b.formId] }).expect(201)).body.id;
      out.get[who] = (await as(who, request(sut.url).get(`/api/v1/merged-datasets/${id}`))).status;
      out.del[who] = (await as(who, request(sut.url).delete(`/api/v1/merged-datasets/${id}`))).status;
    }
    expect(out.get).toEqual({ owner: 200, manager: 200, editor: 200, dataentry: 200, readonly: 200, stranger: 404, anonymous: 401 });
    expect(out.del).toEqual({ owner: 204, manager: 204, editor: 403, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 });
  });

  it('GET /api/v1/forms lists only visible forms, with the caller role', async () => {
    const { formId } = await sharedForm('listing');
    const mine = await as('readonly', request(sut.url).get('/api/v1/forms')).expect(200);
    expect(mine.body.find((f: { formid: number }) => f.formid === formId)).toMatchObject({ role: 'readonly', owner: users.owner.username });
    const theirs = await as('stranger', request(sut.url).get('/api/v1/forms')).expect(200);
    expect(theirs.body.map((f: { formid: number }) => f.formid)).not.toContain(formId);
    await request(sut.url).get('/api/v1/forms').expect(401);
  });

  it('sharing: roles above your own are refused, remove takes a role away, bad input is 400', async () => {
    const { formId } = await sharedForm('sharing');
    const target = await createTestUser(sut.app);
    await as('manager', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: target.username, role: 'owner' }).expect(403);
    await as('manager', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: target.username, role: 'editor' }).expect(204);
    await request(sut.url).get(`/api/v1/forms/${formId}`).set('Authorization', target.token).expect(200);
    await as('manager', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: target.username, role: 'editor', remove: true }).expect(204);
    await request(sut.url).get(`/api/v1/forms/${formId}`).set('Authorization', target.token).expect(404);
    const bad = await as('owner', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: 'nobody-here', role: 'boss' }).expect(400);
    expect(Object.keys(bad.body).sort()).toEqual(['role']);
    await as('owner', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: 'nobody-here', role: 'editor' }).expect(400);
    await as('manager', request(sut.url).put(`/api/v1/forms/${formId}/share`)).send({ username: users.owner.username, role: 'readonly' }).expect(400);
  });

  describe('creating forms', () => {
    it('XForm as multipart xml_file and as an application/xml body; fields in form order', async () => {
      const a = await as('owner', request(sut.url).post('/api/v1/forms')).attach('xml_file', Buffer.from(demoXForm('xf_multipart', 'A &amp; B')), 'form.xml').expect(201);
      expect(a.body).toMatchObject({ id_string: 'xf_multipart', title: 'A & B', owner: users.owner.username, num_of_submissions: 0, last_submission_time: null, version: '2026110101' });
      expect(Object.keys(a.body)).toEqual(expect.arrayContaining(['formid', 'id_string', 'title', 'uuid', 'owner', 'date_created']));
      expect(a.body.uuid).toMatch(/^[0-9a-f]{32}$/);
      const b = await as('owner', request(sut.url).post('/api/v1/forms')).set('Content-Type', 'application/xml').send(demoXForm('xf_body')).expect(201);
      const fields = await as('owner', request(sut.url).get(`/api/v1/forms/${b.body.formid}/fields`)).expect(200);
      expect(fields.body.map((f: { xpath: string; type: string }) => `${f.xpath}:${f.type}`)).toEqual([
        'name:text', 'age:integer', 'location:geopoint', 'household:group', 'household/size:integer', 'household/photo:image', 'photo2:image', 'voice:audio', 'member:repeat', 'member/member_name:text',
      ]);
      expect(fields.body[0].label).toBe('Name & surname');
    });

    it('JSON definition: renders an XForm that parses back to the same fields', async () => {
      const res = await as('owner', request(sut.url).post('/api/v1/forms')).send({ ...SIMPLE, id_string: 'json_def' }).expect(201);
      const xml = await as('owner', request(sut.url).get(`/api/v1/forms/${res.body.formid}/form.xml`)).expect(200);
      expect(xml.headers['content-type']).toMatch(/application\/xml/);
      const again = await as('owner', request(sut.url).post('/api/v1/forms')).set('Content-Type', 'application/xml').send(xml.text.replace('id="json_def"', 'id="json_def2"')).expect(201);
      const f1 = (await as('owner', request(sut.url).get(`/api/v1/forms/${res.body.formid}/fields`))).body;
      const f2 = (await as('owner', request(sut.url).get(`/api/v1/forms/${again.body.formid}/fields`))).body;
      expect(f2).toEqual(f1);
    });

    it('refuses bad uploads with clear 4xx', async () => {
      const xxe = `<?xml version="1.0"?><!DOCTYPE h:html [<!ENTITY x SYSTEM "file:///etc/passwd">]>${demoXForm('xxe').replace('<?xml version="1.0"?>', '')}`;
      await as('owner', request(sut.url).post('/api/v1/forms')).set('Content-Type', 'application/xml').send(xxe).expect(400);
      await as('owner', request(sut.url).post('/api/v1/forms')).set('Content-Type', 'application/xml').send('<h:html><broken>').expect(400);
      await as('owner', request(sut.url).post('/api/v1/forms')).set('Content-Type', 'application/xml').send('<notaform/>').expect(400);
      await as('owner', request(sut.url).post('/api/v1/forms')).set('Content-Type', 'text/plain').send('x').expect(415);
      await as('owner', request(sut.url).post('/api/v1/forms')).attach('other', Buffer.from('x'), 'x.xml').expect(400);
      const bad = await as('owner', request(sut.url).post('/api/v1/forms')).send({ id_string: '1 bad', fields: [{ name: 'q', type: 'nope' }] }).expect(400);
      expect(Object.keys(bad.body).sort()).toEqual(['fields', 'id_string']);
      await as('owner', request(sut.url).post('/api/v1/forms')).send({ ...SIMPLE, id_string: 'dup' }).expect(201);
      const dup = await as('owner', request(sut.url).post('/api/v1/forms')).send({ ...SIMPLE, id_string: 'dup' }).expect(400);
      expect(dup.body.id_string).toBeDefined();
      await request(sut.url).post('/api/v1/forms').send(SIMPLE).expect(401);
    });

    it('unknown or non-numeric ids are 404; a deleted form is gone for everyone', async () => {
      await as('owner', request(sut.url).get('/api/v1/forms/999999')).expect(404);
      await as('owner', request(sut.url).get('/api/v1/forms/abc')).expect(404);
      await as('owner', request(sut.url).get('/api/v1/data/abc')).expect(404);
      const { formId } = await sharedForm('tobedeleted');
      await as('owner', request(sut.url).delete(`/api/v1/forms/${formId}`)).expect(204);
      await as('owner', request(sut.url).get(`/api/v1/forms/${formId}`)).expect(404);
      await as('readonly', request(sut.url).get(`/api/v1/data/${formId}`)).expect(404);
      await as('owner', request(sut.url).post('/api/v1/submissions')).send({ id: 'tobedeleted', submission: { q: '1' } }).expect(404);
    });
  });
});
