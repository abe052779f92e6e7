import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { binary, unzip } from './data-fixtures.js';
import { demoInstance, demoXForm, jpeg, png, wav } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('media archives: GET /api/v1/media.zip streams the listing\u2019s files byte-exact', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let files: { house: Buffer; yard: Buffer; voice: Buffer };

  beforeAll(async () => {
    sut = await startTestCollectApp({ MEDIA_ROOT: mkdtempSync(join(tmpdir(), 'collect-archive-')) });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('archive_form')), 'form.xml').expect(201)).body.formid;
    files = { house: await jpeg(), yard: await png(), voice: wav() };
    for (const id of ['aaaaaaaa-1111-4111-8111-111111111111', 'bbbbbbbb-2222-4222-8222-222222222222', '../../escape']) {
      await request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
        .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: id, idString: 'archive_form' })), { filename: 'submission.xml', contentType: 'text/xml' })
        .attach('house.jpg', files.house, { filename: 'house.jpg', contentType: 'image/jpeg' })
        .attach('yard.png', files.yard, { filename: 'yard.png', contentType: 'image/png' })
        .attach('voice.wav', files.voice, { filename: 'voice.wav', contentType: 'audio/wav' })
        .expect(201);
    }
  });
  afterAll(() => sut.close());

  const zip = (query: string, who = owner) => request(sut.url).get(`/api/v1/media.zip${query}`).set('Authorization', who.token).buffer(true).parse(binary);

  it('holds <instance uuid>/<filename> for every file, byte-exact, with inert attachment headers', async () => {
    const res = await zip(`?xform=${formId}`).expect(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="media.zip"');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain('sandbox');
    const entries = await unzip(res.body as Buffer);
    expect([...entries.keys()].sort()).toEqual(
      ['aaaaaaaa-1111-4111-8111-111111111111', 'bbbbbbbb-2222-4222-8222-222222222222', '__.._escape'].flatMap((u) => [`${u}/house.jpg`, `${u}/voice.wav`, `${u}/yard.png`]).sort(),
    );
    for (const [name, bytes] of entries) {
      const want = name.endsWith('house.jpg') ? files.house : name.endsWith('yard.png') ? files.yard : files.voice;
      expect(bytes.equals(want)).toBe(true);
    }
  });

  it('applies the listing filters (type, instance) and the submission time range', async () => {
    const images = await unzip((await zip(`?xform=${formId}&type=image`).expect(200)).body as Buffer);
    expect([...images.keys()].every((n) => /\.(jpg|png)$/.test(n))).toBe(true);
    expect(images.size).toBe(6);
    const db = sut.app.get(DataSource);
    const [first] = (await db.query(`SELECT id FROM submissions WHERE form_id = $1 AND uuid = 'aaaaaaaa-1111-4111-8111-111111111111'`, [formId])) as Array<{ id: number }>;
    const one = await unzip((await zip(`?instance=${first.id}`).expect(200)).body as Buffer);
    expect([...one.keys()].every((n) => n.startsWith('aaaaaaaa-1111-4111-8111-111111111111/'))).toBe(true);
    await db.query(`UPDATE submissions SET date_created = '2025-06-01T12:00:00Z' WHERE id = $1`, [first.id]);
    const recent = await unzip((await zip(`?xform=${formId}&submitted_after=2026-01-01`).expect(200)).body as Buffer);
    expect(recent.size).toBe(6);
    const old = await unzip((await zip(`?xform=${formId}&submitted_before=2025-06-01T12:00:01Z`).expect(200)).body as Buffer);
    expect([...old.keys()].sort()).toEqual(['aaaaaaaa-1111-4111-8111-111111111111/house.jpg', 'aaaaaaaa-1111-4111-8111-111111111111/voice.wav', 'aaaaaaaa-1111-4111-8111-111111111111/yard.png']);
    const bad = await zip('?submitted_after=yesterday').expect(400);
    expect(Object.keys(JSON.parse((bad.body as Buffer).toString()))).toEqual(['submitted_after']);
  });

  it('follows the listing\u2019s roles: a stranger gets 404 for the form and an empty archive unfiltered', async () => {
    const stranger = await createTestUser(sut.app);
    await zip(`?xform=${formId}`, stranger).expect(404);
    expect((await unzip((await zip('', stranger).expect(200)).body as Buffer)).size).toBe(0);
    await request(sut.url).get(`/api/v1/media.zip?xform=${formId}`).expect(401);
  });
});
