import request from 'supertest';
import { listFiles } from './data-fixtures.js';
import { demoInstance, demoXForm, jpeg } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('submissions under concurrency (pool of 2 connections)', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  const mediaRoot = mkdtempSync(join(tmpdir(), 'collect-conc-'));

  beforeAll(async () => {
    // A tiny pool: any code path that takes a second connection inside the intake transaction
    // deadlocks here (it did once: the bench found it).
    sut = await startTestCollectApp({ DATABASE_POOL_SIZE: '2', MEDIA_ROOT: mediaRoot });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm()), 'form.xml').expect(201)).body.formid;
  });
  afterAll(() => sut.close());

  it('stores 20 parallel submissions with attachments', async () => {
    const photo = await jpeg();
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(sut.url)
          .post('/submission')
          .set('Authorization', owner.token)
          .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: `par-${i}` })), 'submission.xml')
          .attach('house.jpg', photo, 'house.jpg')
          .then((r) => r.status),
      ),
    );
    expect(statuses).toEqual(Array(20).fill(201));
    const form = await request(sut.url).get(`/api/v1/forms/${formId}`).set('Authorization', owner.token).expect(200);
    expect(form.body.num_of_submissions).toBe(20);
    // Same file name in every submission: each record gets its own stored file.
    const data = await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200);
    const filenames = data.body.map((r: { _attachments: Array<{ filename: string }> }) => r._attachments[0].filename);
    expect(new Set(filenames).size).toBe(20);
    expect(filenames.filter((f: string) => f.endsWith('/house.jpg'))).toHaveLength(1);
    expect(listFiles(mediaRoot)).toHaveLength(20);
  });

  it('stores one record for the same instance sent 10 times at once', async () => {
    const body = { id: 'household_survey', submission: { name: 'Same', meta: { instanceID: 'uuid:same-instance' } } };
    const statuses = await Promise.all(Array.from({ length: 10 }, () => request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send(body).then((r) => r.status)));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 202)).toHaveLength(9);
    const data = await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200);
    expect(data.body.filter((r: { _uuid: string }) => r._uuid === 'same-instance')).toHaveLength(1);
  });
});
