import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { IN_MEMORY_REQUEST_BYTES } from '../src/openrosa/multipart.js';
import { SubmissionEvents, type SubmissionEvent } from '../src/submissions/submission-events.js';
import { listFiles } from './data-fixtures.js';
import { demoInstance, demoXForm, jpeg, png, wav } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('submissions: OpenRosa + JSON intake, data endpoint (local storage)', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let mediaRoot: string;
  const events: SubmissionEvent[] = [];
  let files: { house: Buffer; yard: Buffer; voice: Buffer };

  beforeAll(async () => {
    mediaRoot = mkdtempSync(join(tmpdir(), 'collect-media-'));
    sut = await startTestCollectApp({ MEDIA_ROOT: mediaRoot, ATTACHMENT_MAX_BYTES: '200000' });
    sut.app.get(SubmissionEvents).onCommitted((e) => {
      events.push(e);
    });
    owner = await createTestUser(sut.app);
    const res = await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm()), 'form.xml').expect(201);
    formId = res.body.formid;
    files = { house: await jpeg(), yard: await png(), voice: wav() };
  });
  afterAll(() => sut.close());

  const post = (instanceId: string, extra: Partial<Parameters<typeof demoInstance>[0]> = {}, path = '/submission') =>
    request(sut.url)
      .post(path)
      .set('Authorization', owner.token)
      .set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId, ...extra })), { filename: 'submission.xml', contentType: 'text/xml' })
      .attach('house.jpg', files.house, { filename: 'house.jpg', contentType: 'image/jpeg' })
      .attach('yard.png', files.yard, { filename: 'yard.png', contentType: 'image/png' })
      .attach('voice.wav', files.voice, { filename: 'voice.wav', contentType: 'audio/wav' });

  it('stores an OpenRosa submission with two images and audio; /api/v1/data shows exactly the §2.2 shape', async () => {
    const res = await post('11111111-1111-4111-8111-111111111111').expect(201);
    expect(res.headers['x-openrosa-version']).toBe('1.0');
    expect(res.text).toContain('Successful submission.');

    const list = await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200);
    expect(list.headers['x-total-count']).toBe('1');
    expect(list.body).toHaveLength(1);
    const s = list.body[0];
    expect(Object.keys(s).sort()).toEqual(
      [
        'name', 'age', 'location', 'household/size', 'household/photo', 'photo2', 'voice', 'member',
        'formhub/uuid', 'meta/instanceID', '_id', '_uuid', '_xform_id_string', '_xform_id', '_status', '_submission_time', '_deleted_at',
        '_geolocation', '_attachments', '_bamboo_dataset_id', '_submitted_by', '_version', '_edited', '_tags', '_notes',
      ].sort(),
    );
    expect(s).toMatchObject({
      name: 'Jane', age: '34', 'household/size': '4', 'household/photo': 'house.jpg',
      member: [{ 'member/member_name': 'Ann' }, { 'member/member_name': 'Bob' }],
      'meta/instanceID': 'uuid:11111111-1111-4111-8111-111111111111', _uuid: '11111111-1111-4111-8111-111111111111',
      _xform_id_string: 'household_survey', _xform_id: formId, _status: 'submitted_via_web', _deleted_at: null,
      _geolocation: [-1.2864, 36.8172], _bamboo_dataset_id: '', _submitted_by: owner.username, _version: '2026110101', _edited: false, _tags: [], _notes: [],
    });
    expect(typeof s._id).toBe('number');
    expect(s._submission_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(s['formhub/uuid']).toMatch(/^[0-9a-f]{32}$/);
    expect(s._attachments.map((a: { mimetype: string }) => a.mimetype)).toEqual(['image/jpeg', 'image/png', 'audio/wav']);
    const att = s._attachments[0];
    expect(Object.keys(att).sort()).toEqual(['download_url', 'filename', 'id', 'instance', 'medium_download_url', 'mimetype', 'name', 'small_download_url', 'xform'].sort());
    expect(att).toMatchObject({ name: 'house.jpg', instance: s._id, xform: formId, filename: `${owner.username}/attachments/${formId}_household_survey/house.jpg` });
    expect(att.download_url).toBe(`${sut.config.PUBLIC_BASE_URL}/api/v1/files/${att.id}?filename=${encodeURIComponent(att.filename)}`);
    expect(att.small_download_url).toBe(`${att.download_url}&suffix=small`);
    expect(listFiles(mediaRoot)).toHaveLength(3);
    expect(events.filter((e) => e.type === 'submission.created')).toHaveLength(1);

    const one = await request(sut.url).get(`/api/v1/data/${formId}/${s._id}`).set('Authorization', owner.token).expect(200);
    expect(one.body).toEqual(s);
    const form = await request(sut.url).get(`/api/v1/forms/${formId}`).set('Authorization', owner.token).expect(200);
    expect(form.body.num_of_submissions).toBe(1);
    expect(form.body.last_submission_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  });

  it('stores nothing new for the same instance sent again (202, no event, no files)', async () => {
    const before = events.length;
    const res = await post('11111111-1111-4111-8111-111111111111', {}, '/api/v1/submissions').expect(202);
    expect(res.body.message).toBe('Duplicate submission.');
    const list = await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]._attachments).toHaveLength(3);
    expect(listFiles(mediaRoot)).toHaveLength(3);
    expect(events.length).toBe(before);
  });

  it('refuses the same instanceID with different content (409), storing nothing', async () => {
    await post('11111111-1111-4111-8111-111111111111', { name: 'Other' }).expect(409);
    expect(listFiles(mediaRoot)).toHaveLength(3);
  });

  it('an edit (meta/deprecatedID) replaces the values and keeps _id', async () => {
    const before = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token)).body[0];
    await request(sut.url)
      .post('/submission')
      .set('Authorization', owner.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: '22222222-2222-4222-8222-222222222222', deprecatedId: '11111111-1111-4111-8111-111111111111', name: 'Janet', age: '35' })), 'submission.xml')
      .expect(201);
    const after = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body;
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ _id: before._id, name: 'Janet', age: '35', _edited: true, _uuid: '22222222-2222-4222-8222-222222222222' });
    // Files not re-sent but still named by the answers are kept.
    expect(after[0]._attachments.map((a: { id: number }) => a.id)).toEqual(before._attachments.map((a: { id: number }) => a.id));
    expect(events.at(-1)).toMatchObject({ type: 'submission.updated', submissionId: before._id, formId });
  });

  it('JSON submissions: nested groups and flat xpath keys store the same record', async () => {
    const nested = await request(sut.url)
      .post('/api/v1/submissions')
      .set('Authorization', owner.token)
      .send({ id: 'household_survey', submission: { name: 'N', age: 7, household: { size: 2 }, member: [{ member_name: 'Z' }], meta: { instanceID: 'uuid:aaaa' } } })
      .expect(201);
    expect(nested.body).toMatchObject({ message: 'Successful submission.', formid: 'household_survey', instanceID: 'uuid:aaaa' });
    expect(nested.body.submissionDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    await request(sut.url)
      .post('/api/v1/submissions')
      .set('Authorization', owner.token)
      .send({ id: 'household_survey', submission: { name: 'N', age: '7', 'household/size': '2', member: [{ 'member/member_name': 'Z' }], 'meta/instanceID': 'uuid:bbbb' } })
      .expect(201);
    const list = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body;
    const strip = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('_') && k !== 'meta/instanceID'));
    const a = list.find((r: { _uuid: string }) => r._uuid === 'aaaa');
    const b = list.find((r: { _uuid: string }) => r._uuid === 'bbbb');
    expect(strip(a)).toEqual(strip(b));
    expect(strip(a)).toMatchObject({ name: 'N', age: '7', 'household/size': '2', member: [{ 'member/member_name': 'Z' }] });
    // And the same nested payload again is a duplicate.
    await request(sut.url)
      .post('/api/v1/submissions')
      .set('Authorization', owner.token)
      .send({ id: 'household_survey', submission: { 'household/size': 2, name: 'N', age: 7, member: [{ member_name: 'Z' }], meta: { instanceID: 'uuid:aaaa' } } })
      .expect(202);
  });

  it('soft delete hides the submission and emits submission.deleted', async () => {
    const list = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token)).body;
    const target = list.find((r: { _uuid: string }) => r._uuid === 'bbbb');
    await request(sut.url).delete(`/api/v1/data/${formId}/${target._id}`).set('Authorization', owner.token).expect(204);
    await request(sut.url).get(`/api/v1/data/${formId}/${target._id}`).set('Authorization', owner.token).expect(404);
    const after = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token)).body;
    expect(after.map((r: { _id: number }) => r._id)).not.toContain(target._id);
    expect(events.at(-1)).toMatchObject({ type: 'submission.deleted', submissionId: target._id });
  });

  describe('refusals store nothing and leave no files', () => {
    let countBefore: number;
    let filesBefore: number;
    beforeEach(async () => {
      countBefore = Number((await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token)).headers['x-total-count']);
      filesBefore = listFiles(mediaRoot).length;
    });
    afterEach(async () => {
      const count = Number((await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token)).headers['x-total-count']);
      expect(count).toBe(countBefore);
      expect(listFiles(mediaRoot).length).toBe(filesBefore);
      expect(listFiles(sut.config.UPLOAD_TMP_DIR).filter((f) => f.endsWith('.part'))).toEqual([]);
    });

    it('XXE payload: 400', async () => {
      const xxe = `<?xml version="1.0"?><!DOCTYPE data [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><data id="household_survey"><name>&xxe;</name><meta><instanceID>uuid:x1</instanceID></meta></data>`;
      const res = await request(sut.url).post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(xxe), 'submission.xml').attach('house.jpg', files.house, 'house.jpg').expect(400);
      expect(JSON.stringify(res.body)).not.toContain('root:');
    });

    it('billion laughs: 400', async () => {
      const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><data id="household_survey"><name>&lol2;</name></data>`;
      await request(sut.url).post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(bomb), 'submission.xml').expect(400);
    });

    it('malformed XML: 400', async () => {
      const res = await request(sut.url).post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from('<data id="household_survey"><name>x</data>'), 'submission.xml').attach('house.jpg', files.house, 'house.jpg').expect(400);
      expect(res.body.xml_submission_file[0]).toMatch(/Malformed XML/);
    });

    it('oversized attachment: 413', async () => {
      const big = Buffer.alloc(300_000, 1);
      await request(sut.url)
        .post('/submission')
        .set('Authorization', owner.token)
        .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'big-1' })), 'submission.xml')
        .attach('house.jpg', files.house, 'house.jpg')
        .attach('big.bin', big, 'big.bin')
        .expect(413);
    });

    it('wrong content type: 415', async () => {
      await request(sut.url).post('/submission').set('Authorization', owner.token).set('Content-Type', 'text/plain').send('hello').expect(415);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).set('Content-Type', 'text/plain').send('hello').expect(415);
    });

    it('unknown form: 404', async () => {
      await request(sut.url).post('/submission').set('Authorization', owner.token).attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'u-1', idString: 'nope' })), 'submission.xml').attach('house.jpg', files.house, 'house.jpg').expect(404);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'nope', submission: { a: '1' } }).expect(404);
    });

    it('missing xml part and bad JSON shapes: 400', async () => {
      await request(sut.url).post('/submission').set('Authorization', owner.token).attach('house.jpg', files.house, 'house.jpg').expect(400);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'household_survey' }).expect(400);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'household_survey', submission: { 'bad key!': 'x' } }).expect(400);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).set('Content-Type', 'application/json').send('{"id": ').expect(400);
    });

    it('form not accepting submissions: 403', async () => {
      await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ downloadable: false }).expect(200);
      await post('closed-1').expect(403);
      await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ downloadable: true }).expect(200);
    });

    it('a failing outbox write rolls back the record and removes the stored files', async () => {
      const before = events.length;
      const filesBefore = listFiles(mediaRoot).sort();
      const db = sut.app.get(DataSource);
      // The outbox statement reads rest_services: without that table it fails inside the transaction.
      await db.query('ALTER TABLE rest_services RENAME TO rest_services_away');
      try {
        await post('outbox-fails').expect(500);
      } finally {
        await db.query('ALTER TABLE rest_services_away RENAME TO rest_services');
      }
      expect(events.length).toBe(before);
      expect(await db.query(`SELECT id FROM submissions WHERE uuid = 'outbox-fails'`)).toEqual([]);
      expect(listFiles(mediaRoot).sort()).toEqual(filesBefore);
    });

    it('anonymous: 401', async () => {
      await request(sut.url).post('/submission').attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'anon-1' })), 'submission.xml').expect(401);
    });
  });

  it('HEAD /submission answers 204 with OpenRosa headers; without credentials 401 with WWW-Authenticate, as the peers do', async () => {
    const res = await request(sut.url).head('/submission').set('Authorization', owner.basic).expect(204);
    expect(res.headers['x-openrosa-version']).toBe('1.0');
    expect(res.headers['x-openrosa-accept-content-length']).toBe('200000');
    const anonymous = await request(sut.url).head('/submission').expect(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="api"');
  });

  it('a duplicate by another dataentry user adds no attachment to someone else\'s record; the submitter and editors still can', async () => {
    const [first, other, editor] = [await createTestUser(sut.app), await createTestUser(sut.app), await createTestUser(sut.app)];
    for (const [u, role] of [[first, 'dataentry'], [other, 'dataentry'], [editor, 'editor']] as const) {
      await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: u.username, role }).expect(204);
    }
    const xml = Buffer.from(demoInstance({ instanceId: 'split-by-two', name: 'Split' }));
    const send = (who: TestUser, ...attachments: Array<[string, Buffer, string]>) => {
      let req = request(sut.url).post('/submission').set('Authorization', who.token).attach('xml_submission_file', xml, { filename: 'submission.xml', contentType: 'text/xml' });
      for (const [name, data, type] of attachments) req = req.attach(name, data, { filename: name, contentType: type });
      return req;
    };
    await send(first).expect(201);
    const names = async () => {
      const [row] = (await request(sut.url).get(`/api/v1/data/${formId}`).query({ page_size: 10000 }).set('Authorization', owner.token).expect(200)).body.filter((r: { _uuid: string }) => r._uuid === 'split-by-two');
      return (row._attachments as Array<{ name: string }>).map((a) => a.name).sort();
    };
    const refused = await send(other, ['house.jpg', files.house, 'image/jpeg']).expect(403);
    expect(refused.text).toContain('Only the user who made this submission');
    expect(await names()).toEqual([]);
    // The plain duplicate (nothing new) is still answered as one.
    await send(other).expect(202);
    await send(first, ['house.jpg', files.house, 'image/jpeg']).expect(202);
    await send(editor, ['yard.png', files.yard, 'image/png']).expect(202);
    expect(await names()).toEqual(['house.jpg', 'yard.png']);
  });

  it('stores attachments byte for byte both ways: held in memory (a small body) and spooled to disk (a body over IN_MEMORY_REQUEST_BYTES)', async () => {
    const stored = async (uuid: string) => {
      const [row] = (await request(sut.url).get(`/api/v1/data/${formId}`).query({ page_size: 10000 }).set('Authorization', owner.token).expect(200)).body.filter((r: { _uuid: string }) => r._uuid === uuid);
      return new Map((row._attachments as Array<{ name: string; filename: string }>).map((a) => [a.name, readFileSync(join(mediaRoot, a.filename))]));
    };
    await post('in-memory-parts').expect(201);
    const small = await stored('in-memory-parts');
    expect(small.get('house.jpg')!.equals(files.house)).toBe(true);
    expect(small.get('voice.wav')!.equals(files.voice)).toBe(true);
    // Six parts of 190,000 bytes (each under this app's ATTACHMENT_MAX_BYTES): past the in-memory bound.
    const big = Array.from({ length: 6 }, (_, i) => randomBytes(190_000).fill(i, 0, 1));
    expect(big.reduce((n, b) => n + b.length, 0)).toBeGreaterThan(IN_MEMORY_REQUEST_BYTES);
    let req = request(sut.url).post('/submission').set('Authorization', owner.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'spooled-parts', name: 'Big' })), { filename: 'submission.xml', contentType: 'text/xml' });
    big.forEach((data, i) => (req = req.attach(`part${i}.bin`, data, { filename: `part${i}.bin`, contentType: 'application/octet-stream' })));
    await req.expect(201);
    const spooled = await stored('spooled-parts');
    big.forEach((data, i) => expect(spooled.get(`part${i}.bin`)!.equals(data)).toBe(true));
    expect(listFiles(sut.config.UPLOAD_TMP_DIR).filter((f) => f.endsWith('.part'))).toEqual([]);
  });
});
