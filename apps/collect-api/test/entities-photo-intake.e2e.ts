import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import request from 'supertest';
import { SubmissionsRepository } from '../src/submissions/submissions.repository.js';
import type { EntityInsertItem, EntityInsertResult } from '../src/submissions/submission-entity-insert.js';
import { binary, listFiles } from './data-fixtures.js';
import { REGISTRATION_XFORM, registrationInstance } from './entities-fixtures.js';
import { jpeg } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** The trees registration form with a photo question (a registration form as case management teams make them). */
const PHOTO_XFORM = REGISTRATION_XFORM
  .replace('id="trees_registration"', 'id="trees_photo"')
  .replace('<intake_notes/>', '<intake_notes/>\n          <photo/>')
  .replace('<bind nodeset="/data/intake_notes" type="string"/>', '<bind nodeset="/data/intake_notes" type="string"/>\n      <bind nodeset="/data/photo" type="binary"/>')
  .replace('</h:body>', '<upload ref="/data/photo" mediatype="image/*"><label>Photo</label></upload>\n  </h:body>');

/**
 * A registration whose instance carries a photo goes through intake's one statement with its
 * attachment rows (docs/entities.md, "Intake: one statement"): the file first, then the
 * submission, its attachment, the entity, its version and the list's revision together. What
 * the statement declines goes the transactional way, and no file of the declined try is left.
 * Real PostgreSQL and a real media folder.
 */
describe('Entity intake with attachments', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formPk: number;
  let listId: number;
  let media: string;
  let photo: Buffer;
  const calls: Array<{ item: EntityInsertItem; result: EntityInsertResult | Error }> = [];

  const api = () => request(sut.url);
  const submit = (instanceId: string, entityId: string, species: string) => {
    const xml = registrationInstance({ instanceId, entityId, species, circumference: '12' }).replace('<intake_notes/>', '<intake_notes/><photo>tree.jpg</photo>').replace('id="trees_registration"', 'id="trees_photo"');
    return api().post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' })
      .attach('tree.jpg', photo, { filename: 'tree.jpg', contentType: 'image/jpeg' });
  };
  const row = async (instanceId: string) =>
    ((await api().get(`/api/v1/data/${formPk}`).query({ page_size: 1000 }).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>)
      .find((r) => r._uuid === instanceId)!;
  const download = async (url: string) => (await api().get(new URL(url).pathname + new URL(url).search).set('Authorization', owner.token).buffer(true).parse(binary).expect(200)).body as Buffer;
  const entities = async () => (await api().get(`/api/v2/entity-lists/${listId}/entities`).query({ page_size: 1000 }).set('Authorization', owner.token).expect(200)).body as Array<{ uuid: string; data: Record<string, string> }>;
  const attachmentFiles = () => listFiles(media).filter((f) => f.includes('/attachments/'));

  beforeAll(async () => {
    media = mkdtempSync(join(tmpdir(), 'collect-entity-photo-'));
    sut = await startTestCollectApp({ MEDIA_ROOT: media });
    owner = await createTestUser(sut.app);
    formPk = (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(PHOTO_XFORM), 'form.xml').expect(201)).body.formid as number;
    listId = ((await api().get('/api/v2/entity-lists').set('Authorization', owner.token).expect(200)).body as Array<{ id: number; name: string }>).find((l) => l.name === 'trees')!.id;
    photo = Buffer.concat([await jpeg(), randomBytes(20_000)]);
    // The first submission to a list runs the held updates' time check: the transactional path.
    await submit(randomUUID(), randomUUID(), 'elm').expect(201);
    const repo = sut.app.get(SubmissionsRepository);
    const original = repo.insertCheckedAloneWithEntity.bind(repo);
    jest.spyOn(repo, 'insertCheckedAloneWithEntity').mockImplementation(async (item, text) => {
      try {
        const result = await original(item, text);
        calls.push({ item, result });
        return result;
      } catch (err) {
        calls.push({ item, result: err as Error });
        throw err;
      }
    });
  });
  afterAll(() => sut?.close());
  beforeEach(() => {
    calls.length = 0;
  });

  it('a registration with a photo is one statement: the submission, its attachment, the entity; the photo downloads as sent', async () => {
    const instanceId = randomUUID();
    const entityId = randomUUID();
    await submit(instanceId, entityId, 'oak').expect(201);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.item.attachments).toEqual([expect.objectContaining({ name: 'tree.jpg', mimetype: 'image/jpeg', size: photo.length })]);
    expect(calls[0]!.result).toMatchObject({ allowed: true, declined: false, created: expect.objectContaining({ uuid: instanceId }) });
    const stored = await row(instanceId);
    const attachments = stored._attachments as Array<{ name: string; download_url: string }>;
    expect(attachments.map((a) => a.name)).toEqual(['tree.jpg']);
    expect((await download(attachments[0]!.download_url)).equals(photo)).toBe(true);
    expect(stored).not.toHaveProperty('_entity_errors');
    expect((await entities()).find((e) => e.uuid === entityId)).toMatchObject({ data: { species: 'oak', circumference_cm: '12' } });
    expect((await api().get(`/api/v1/media/count?xform=${formPk}`).set('Authorization', owner.token).expect(200)).body).toEqual({ count: 2 });
  });

  it('an entity uuid that exists: the statement declines, its file is removed, and the transactional path keeps the submission and its photo', async () => {
    const entityId = randomUUID();
    await submit(randomUUID(), entityId, 'ash').expect(201);
    const filesBefore = attachmentFiles().length;
    calls.length = 0;
    const instanceId = randomUUID();
    await submit(instanceId, entityId, 'yew').expect(201);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.result).toMatchObject({ allowed: true, declined: true, created: null });
    const stored = await row(instanceId);
    expect(stored._entity_errors).toBeDefined();
    const attachments = stored._attachments as Array<{ name: string; download_url: string }>;
    expect(attachments.map((a) => a.name)).toEqual(['tree.jpg']);
    expect((await download(attachments[0]!.download_url)).equals(photo)).toBe(true);
    // One file more: the transactional path's; the declined statement left none.
    expect(attachmentFiles()).toHaveLength(filesBefore + 1);
    expect((await entities()).find((e) => e.uuid === entityId)).toMatchObject({ data: { species: 'ash' } });
  });

  it('the same instance sent again is a duplicate: one submission, one file', async () => {
    const instanceId = randomUUID();
    const entityId = randomUUID();
    await submit(instanceId, entityId, 'fir').expect(201);
    const files = attachmentFiles().length;
    await submit(instanceId, entityId, 'fir').expect(202);
    expect(attachmentFiles()).toHaveLength(files);
    expect(((await api().get(`/api/v1/data/${formPk}`).query({ page_size: 1000 }).set('Authorization', owner.token).expect(200)).body as Array<{ _uuid: string }>)
      .filter((r) => r._uuid === instanceId)).toHaveLength(1);
  });
});
