import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import request from 'supertest';
import { FILE_STORAGE, type FileStorage } from '../src/storage/file-storage.js';
import { demoInstance, demoXForm, jpeg, png, wav } from './forms-fixtures.js';
import { startLocalS3, type LocalS3 } from './submissions-s3rver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

describe('submissions with the S3-compatible storage backend (s3rver)', () => {
  let s3: LocalS3;
  let sut: TestCollectApp;
  let owner: TestUser;
  let client: S3Client;

  const objects = async () =>
    ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((o) => o.Key).sort();

  beforeAll(async () => {
    s3 = await startLocalS3();
    sut = await startTestCollectApp({ ...s3.env, ATTACHMENT_MAX_BYTES: '100000' });
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    owner = await createTestUser(sut.app);
    await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm()), 'form.xml').expect(201);
  });
  afterAll(async () => {
    client.destroy();
    await sut.close();
    await s3.close();
  });

  it('streams attachments into the bucket under {username}/attachments/{formid}_{id_string}/', async () => {
    const house = await jpeg();
    await request(sut.url)
      .post('/submission')
      .set('Authorization', owner.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 's3-1' })), 'submission.xml')
      .attach('house.jpg', house, 'house.jpg')
      .attach('yard.png', await png(), 'yard.png')
      .attach('voice.wav', wav(), 'voice.wav')
      .expect(201);
    const keys = await objects();
    expect(keys).toHaveLength(3);
    expect(keys.every((k) => k!.startsWith(`${owner.username}/attachments/`))).toBe(true);
    const storage = sut.app.get<FileStorage>(FILE_STORAGE);
    expect(storage.kind).toBe('s3');
    const info = await storage.stat(keys.find((k) => k!.endsWith('house.jpg'))!);
    expect(info?.size).toBe(house.length);
  });

  it('leaves no object behind when a submission is refused', async () => {
    const before = await objects();
    await request(sut.url)
      .post('/submission')
      .set('Authorization', owner.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 's3-2', idString: 'unknown_form' })), 'submission.xml')
      .attach('house.jpg', await jpeg(), 'house.jpg')
      .expect(404);
    await request(sut.url)
      .post('/submission')
      .set('Authorization', owner.token)
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 's3-3' })), 'submission.xml')
      .attach('house.jpg', Buffer.alloc(150_000, 7), 'house.jpg')
      .expect(413);
    expect(await objects()).toEqual(before);
  });
});
