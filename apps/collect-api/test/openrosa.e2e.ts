import request from 'supertest';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser } from './test-users.js';

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
});
