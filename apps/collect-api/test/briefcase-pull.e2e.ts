import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { briefcasePull, cursorOf, idsOf } from './briefcase-client.js';
import { demoInstance, demoXForm, jpeg, png, wav } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('Briefcase pull: /view/submissionList and /view/downloadSubmission', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let stranger: TestUser;
  let idString: string;
  const sent: Array<{ instanceId: string; name: string; files: Record<string, Buffer> }> = [];
  let incompleteId: string;
  let deletedId: string;

  const submit = (instanceId: string, name: string, files: Record<string, Buffer>) => {
    let req = request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId, idString, name })), { filename: 'submission.xml', contentType: 'text/xml' });
    for (const [file, bytes] of Object.entries(files)) req = req.attach(file, bytes, { filename: file, contentType: 'application/octet-stream' });
    return req.expect(201);
  };

  beforeAll(async () => {
    sut = await startTestCollectApp();
    [owner, reader, stranger] = await Promise.all([createTestUser(sut.app), createTestUser(sut.app), createTestUser(sut.app)]);
    idString = `bc${Date.now().toString(36)}`;
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm(idString)).expect(201)).body.formid as number;
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    const [photo, yard, voice] = await Promise.all([jpeg(), png(), wav()]);
    for (let i = 0; i < 7; i++) {
      // Each submission's own bytes: a download must return that submission's file.
      const files = { 'house.jpg': Buffer.concat([photo, Buffer.from(`#${i}`)]), 'yard.png': yard, 'voice.wav': voice };
      const instanceId = randomUUID();
      await submit(instanceId, `Person &amp; ${i} &lt;x&gt;`, files);
      sent.push({ instanceId, name: `Person & ${i} <x>`, files });
      if (i === 2) {
        incompleteId = randomUUID();
        await submit(incompleteId, 'half', { 'house.jpg': photo });
      }
      if (i === 4) {
        deletedId = randomUUID();
        await submit(deletedId, 'gone', { 'house.jpg': photo, 'yard.png': yard, 'voice.wav': voice });
        const rows = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body as Array<{ _id: number; _uuid: string }>;
        await request(sut.url).delete(`/api/v1/data/${formId}/${rows.find((r) => r._uuid === deletedId)!._id}`).set('Authorization', owner.token).expect(204);
      }
    }
  }, 120_000);
  afterAll(() => sut?.close());

  it('pages through every complete submission oldest first with the cursor, each with its files byte for byte', async () => {
    const { pulled, pages } = await briefcasePull(sut, owner.basic, '', idString, 3);
    // 7 complete: pages of 3, 3, 1, then the empty page that ends the pull.
    expect(pages).toBe(4);
    expect(pulled.map((p) => p.instanceId)).toEqual(sent.map((s) => `uuid:${s.instanceId}`));
    for (const [i, p] of pulled.entries()) {
      expect(p.data).toMatch(new RegExp(`^<data [^>]*instanceID="uuid:${sent[i]!.instanceId}" submissionDate="\\d{4}-\\d\\d-\\d\\dT[^"]+"`));
      expect(p.data).toContain('<name>Person &amp; ' + i + ' &lt;x&gt;</name>');
      expect(p.data).not.toContain('<?xml');
      expect([...p.files.keys()].sort()).toEqual(['house.jpg', 'voice.wav', 'yard.png']);
      for (const [name, bytes] of Object.entries(sent[i]!.files)) expect(p.files.get(name)!.equals(bytes)).toBe(true);
    }
    // The incomplete and the deleted submissions are not listed.
    expect(pulled.map((p) => p.instanceId)).not.toContain(`uuid:${incompleteId}`);
    expect(pulled.map((p) => p.instanceId)).not.toContain(`uuid:${deletedId}`);
  });

  it('the cursor of an empty page does not start over; the default page is 100; owner-scoped paths and readers pull the same', async () => {
    const first = await request(sut.url).get('/view/submissionList').query({ formId: idString, numEntries: 1000 }).set('Authorization', owner.token).expect(200);
    expect(idsOf(first.text)).toHaveLength(7);
    const end = await request(sut.url).get('/view/submissionList').query({ formId: idString, cursor: cursorOf(first.text) }).set('Authorization', owner.token).expect(200);
    expect(idsOf(end.text)).toEqual([]);
    const again = await request(sut.url).get('/view/submissionList').query({ formId: idString, cursor: cursorOf(end.text) }).set('Authorization', owner.token).expect(200);
    expect(idsOf(again.text)).toEqual([]);
    // numEntries above 1,000 reads as 1,000; none: 100.
    expect(idsOf((await request(sut.url).get('/view/submissionList').query({ formId: idString, numEntries: 5000 }).set('Authorization', owner.token).expect(200)).text)).toHaveLength(7);
    expect(idsOf((await request(sut.url).get('/view/submissionList').query({ formId: idString }).set('Authorization', owner.token).expect(200)).text)).toHaveLength(7);
    const scoped = await briefcasePull(sut, reader.basic, `/${owner.username}`, idString, 4);
    expect(scoped.pulled.map((p) => p.instanceId)).toEqual(sent.map((s) => `uuid:${s.instanceId}`));
  });

  it("reads the formId paths Briefcase sends (Optional[...], Optional.empty, a version) and answers 400/401/404 as documented", async () => {
    const key = `uuid:${sent[0]!.instanceId}`;
    const download = (formId: string, auth: string | null = owner.token, prefix = '') => {
      const req = request(sut.url).get(`${prefix}/view/downloadSubmission`).query({ formId });
      return auth ? req.set('Authorization', auth) : req;
    };
    for (const path of [
      `${idString}[@version=Optional[2026110101] and @uiVersion=null]/data[@key=${key}]`,
      `${idString}[@version=Optional.empty and @uiVersion=Optional.empty]/data[@key=${key}]`,
      `${idString}[@version=2026110101]/anything[@key=${key}]`,
      `${idString}/data[@key=${key}]`,
    ]) expect((await download(path).expect(200)).text).toContain(`instanceID="${key}"`);
    for (const bad of ['', idString, `${idString}/data`, `${idString}[@version=null/data[@key=${key}]`, `${idString}/data[@key=]`, `${idString}[x]/data[@key=${key}]`, `${idString}/data[@key=${key}]tail`]) {
      await download(bad).expect(400);
    }
    await download(`${idString}/data[@key=uuid:${randomUUID()}]`).expect(404);
    await download(`${idString}/data[@key=uuid:${deletedId}]`).expect(404);
    await download(`nosuchform/data[@key=${key}]`).expect(404);
    await download(`${idString}/data[@key=${key}]`, stranger.token).expect(404);
    await download(`${idString}/data[@key=${key}]`, owner.token, `/${stranger.username}`).expect(404);
    const anonymous = await download(`${idString}/data[@key=${key}]`, null).expect(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic /);
    const list = (q: Record<string, string | number>, auth: string | null = owner.token) => {
      const req = request(sut.url).get('/view/submissionList').query(q);
      return auth ? req.set('Authorization', auth) : req;
    };
    for (const numEntries of ['0', '-1', 'ten', '1.5']) await list({ formId: idString, numEntries }).expect(400);
    await list({ formId: idString, cursor: 'not-ours' }).expect(400);
    await list({}).expect(400);
    await list({ formId: 'nosuchform' }).expect(404);
    await list({ formId: idString }, stranger.token).expect(404);
    expect((await list({ formId: idString }, null).expect(401)).headers['www-authenticate']).toMatch(/^Basic /);
    const inert = await list({ formId: idString }).expect(200);
    expect(inert.headers['x-content-type-options']).toBe('nosniff');
    expect(inert.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
  });

  it('a read by id_string shared by several forms names the caller\'s own, else the one shared with the caller first; a tie is a 400 (docs/forms.md)', async () => {
    // The stranger publishes a copy under the same id_string and shares it with the reader, after the owner did.
    const copy = (await request(sut.url).post('/api/v1/forms').set('Authorization', stranger.token).set('Content-Type', 'application/xml').send(demoXForm(idString)).expect(201)).body.formid as number;
    await request(sut.url).put(`/api/v1/forms/${copy}/share`).set('Authorization', stranger.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    const copyId = randomUUID();
    await request(sut.url).post(`/${stranger.username}/submission`).set('Authorization', stranger.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: copyId, idString, name: 'copy' })), { filename: 'submission.xml', contentType: 'text/xml' }).expect(201);
    // downloadSubmission finds an instance only in the form the id_string named for the caller.
    const status = async (auth: string, instanceId: string, prefix = '') =>
      (await request(sut.url).get(`${prefix}/view/downloadSubmission`).query({ formId: `${idString}/data[@key=uuid:${instanceId}]` }).set('Authorization', auth)).status;
    const ours = sent[0]!.instanceId;
    // Each owner reads their own form; the reader the form shared with them first (the owner's).
    expect([await status(owner.token, ours), await status(owner.token, copyId)]).toEqual([200, 404]);
    expect([await status(stranger.token, ours), await status(stranger.token, copyId)]).toEqual([404, 200]);
    expect([await status(reader.token, ours), await status(reader.token, copyId)]).toEqual([200, 404]);
    // A platform admin sees both and has a role on neither: a tie, answered with the owner-scoped path.
    const admin = await createTestUser(sut.app, { superuser: true });
    const tie = await request(sut.url).get('/view/submissionList').query({ formId: idString }).set('Authorization', admin.token).expect(400);
    expect(JSON.stringify(tie.body)).toContain('/<username>/view/');
    expect(await status(admin.token, copyId, `/${stranger.username}`)).toBe(200);
    await request(sut.url).delete(`/api/v1/forms/${copy}`).set('Authorization', stranger.token).expect(204);
  });
});
