import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('OpenRosa form list and download', () => {
  let sut: TestCollectApp;
  beforeAll(async () => {
    sut = await startTestCollectApp();
  });
  afterAll(() => sut.close());

  it('lists the forms a caller may submit to, with a download URL that serves the XForm', async () => {
    const owner = await createTestUser(sut.app);
    const reader = await createTestUser(sut.app);
    const enumerator = await createTestUser(sut.app);
    const form = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm('odk_list', 'ODK &amp; list')).expect(201)).body;
    await request(sut.url).put(`/api/v1/forms/${form.formid}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    await request(sut.url).put(`/api/v1/forms/${form.formid}/share`).set('Authorization', owner.token).send({ username: enumerator.username, role: 'dataentry' }).expect(204);

    const list = await request(sut.url).get('/formList').set('Authorization', enumerator.basic).expect(200);
    expect(list.headers['x-openrosa-version']).toBe('1.0');
    expect(list.headers['content-type']).toMatch(/text\/xml/);
    expect(list.text).toContain('<formID>odk_list</formID><name>ODK &amp; list</name><version>2026110101</version><hash>md5:');
    const url = /<downloadUrl>([^<]+)<\/downloadUrl>/.exec(list.text)![1];
    expect(url).toBe(`${sut.config.PUBLIC_BASE_URL}/forms/${form.formid}/form.xml`);
    const xml = await request(sut.url).get(`/forms/${form.formid}/form.xml`).set('Authorization', enumerator.basic).expect(200);
    expect(xml.text).toContain('<data id="odk_list"');

    expect((await request(sut.url).get('/formList').set('Authorization', reader.basic).expect(200)).text).not.toContain('odk_list');
    expect((await request(sut.url).get('/formList?formID=other').set('Authorization', enumerator.basic).expect(200)).text).not.toContain('odk_list');
    await request(sut.url).get('/formList').expect(401);
    const stranger = await createTestUser(sut.app);
    await request(sut.url).get(`/forms/${form.formid}/form.xml`).set('Authorization', stranger.basic).expect(404);
  });

  describe('owner-scoped paths and forms that share an id_string', () => {
    const share = (owner: TestUser, formId: number, user: TestUser, role = 'dataentry') =>
      request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: user.username, role }).expect(204);
    const newForm = async (owner: TestUser, idString: string) =>
      (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm(idString)).expect(201)).body as { formid: number; uuid: string };
    const submit = (who: TestUser, idString: string, path = '/submission', extra = '') =>
      request(sut.url).post(path).set('Authorization', who.basic).set('X-OpenRosa-Version', '1.0')
        .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: randomUUID(), idString }).replace('</data>', `${extra}</data>`)), { filename: 'submission.xml', contentType: 'text/xml' });
    /** Two owners, each with a form (`idA`, `idB`) shared as dataentry with one enumerator. */
    const twoOwnersSharing = async (idA: string, idB: string) => {
      const [first, second, enumerator] = await Promise.all([1, 2, 3].map(() => createTestUser(sut.app)));
      const a = await newForm(first, idA);
      const b = await newForm(second, idB);
      await share(first, a.formid, enumerator);
      await share(second, b.formid, enumerator);
      return { first, second, enumerator, a, b };
    };
    const count = async (owner: TestUser, formId: number) => Number((await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).headers['x-total-count']);

    it('a stranger sharing a form with the same id_string turns no enumerator submission into a 400, nor takes it', async () => {
      const [victim, stranger, enumerator, newcomer] = await Promise.all([1, 2, 3, 4].map(() => createTestUser(sut.app)));
      const team = await newForm(victim, 'team_survey');
      await share(victim, team.formid, enumerator);
      await share(victim, team.formid, newcomer);
      await submit(enumerator, 'team_survey').expect(201);
      // The stranger's copy, shared with the team's enumerators afterwards.
      const copy = await newForm(stranger, 'team_survey');
      await share(stranger, copy.formid, enumerator);
      await share(stranger, copy.formid, newcomer);
      await submit(enumerator, 'team_survey').expect(201); // the form the enumerator submitted to before
      await submit(newcomer, 'team_survey').expect(201); // never submitted: the role given first
      await request(sut.url).post('/api/v1/submissions').set('Authorization', newcomer.token).send({ id: 'team_survey', submission: { name: 'json' } }).expect(201);
      expect(await count(victim, team.formid)).toBe(4);
      expect(await count(stranger, copy.formid)).toBe(0);
      // The owner-scoped paths go exactly where they say.
      await submit(enumerator, 'team_survey', `/${stranger.username}/submission`).expect(201);
      await submit(enumerator, 'team_survey', `/${victim.username}/submission`).expect(201);
      expect([await count(victim, team.formid), await count(stranger, copy.formid)]).toEqual([5, 1]);
    });

    it('formhub/uuid in the instance picks the form it names, before any other rule', async () => {
      const { first, second, enumerator, a, b } = await twoOwnersSharing('uuid_survey', 'uuid_survey');
      await submit(enumerator, 'uuid_survey', '/submission', `<formhub><uuid>${b.uuid}</uuid></formhub>`).expect(201);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', enumerator.token).send({ id: 'uuid_survey', submission: { name: 'j', formhub: { uuid: b.uuid } } }).expect(201);
      expect([await count(first, a.formid), await count(second, b.formid)]).toEqual([0, 2]);
    });

    it('/{owner}/submission: only that owner\'s form; unknown owner or form 404, no role 404, readonly 403', async () => {
      const [owner, reader, stranger] = await Promise.all([1, 2, 3].map(() => createTestUser(sut.app)));
      const form = await newForm(owner, 'scoped_survey');
      await share(owner, form.formid, reader, 'readonly');
      await submit(owner, 'scoped_survey', `/${owner.username}/submission`).expect(201);
      await submit(owner, 'scoped_survey', '/no-such-user-here/submission').expect(404);
      await submit(owner, 'other_survey', `/${owner.username}/submission`).expect(404);
      await submit(stranger, 'scoped_survey', `/${owner.username}/submission`).expect(404);
      await submit(reader, 'scoped_survey', `/${owner.username}/submission`).expect(403);
      await request(sut.url).post(`/${owner.username}/submission`).attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: randomUUID(), idString: 'scoped_survey' })), 'submission.xml').expect(401);
    });

    it('the OpenRosa answer: XML of its declared length, inert, without an ETag (written whole, not through send())', async () => {
      const owner = await createTestUser(sut.app);
      await newForm(owner, 'answer_survey');
      for (const path of ['/submission', `/${owner.username}/submission`]) {
        const res = await submit(owner, 'answer_survey', path).expect(201);
        expect(res.text).toContain('<message nature="submit_success">Successful submission.</message>');
        expect(res.headers).toMatchObject({
          'content-type': 'text/xml; charset=utf-8', 'content-length': String(Buffer.byteLength(res.text)),
          'content-security-policy': "default-src 'none'; sandbox", 'x-content-type-options': 'nosniff', 'x-openrosa-version': '1.0',
        });
        expect(res.headers.etag).toBeUndefined();
      }
    });

    it('HEAD /{owner}/submission: 401 with WWW-Authenticate anonymous, 204 with credentials, 404 for an unknown owner', async () => {
      const owner = await createTestUser(sut.app);
      const anonymous = await request(sut.url).head(`/${owner.username}/submission`).expect(401);
      expect(anonymous.headers['www-authenticate']).toBe('Basic realm="api"');
      const ok = await request(sut.url).head(`/${owner.username}/submission`).set('Authorization', owner.basic).expect(204);
      expect(ok.headers['x-openrosa-version']).toBe('1.0');
      await request(sut.url).head('/no-such-user-here/submission').set('Authorization', owner.basic).expect(404);
    });

    it('/{owner}/formList lists that owner\'s forms with owner-scoped download URLs; another owner\'s form is not under the name', async () => {
      const { first: owner, enumerator, a: mine, b: theirs } = await twoOwnersSharing('listed_mine', 'listed_theirs');
      const list = await request(sut.url).get(`/${owner.username}/formList`).set('Authorization', enumerator.basic).expect(200);
      expect(list.headers['x-openrosa-version']).toBe('1.0');
      expect(list.text).toContain('<formID>listed_mine</formID>');
      expect(list.text).not.toContain('listed_theirs');
      const url = /<downloadUrl>([^<]+)<\/downloadUrl>/.exec(list.text)![1];
      expect(url).toBe(`${sut.config.PUBLIC_BASE_URL}/${owner.username}/forms/${mine.formid}/form.xml`);
      expect((await request(sut.url).get(`/${owner.username}/forms/${mine.formid}/form.xml`).set('Authorization', enumerator.basic).expect(200)).text).toContain('<data id="listed_mine"');
      await request(sut.url).get(`/${owner.username}/forms/${theirs.formid}/form.xml`).set('Authorization', enumerator.basic).expect(404);
      await request(sut.url).get('/no-such-user-here/formList').set('Authorization', enumerator.basic).expect(404);
      await request(sut.url).get(`/${owner.username}/formList`).expect(401);
    });
  });
});
