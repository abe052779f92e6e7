import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import request from 'supertest';
import { MediaVariantsQueue } from '../src/media/media-variants.queue.js';
import { MediaVariantsService } from '../src/media/media-variants.service.js';
import { FILE_STORAGE, type FileStorage } from '../src/storage/file-storage.js';
import { waitFor } from '@collect/testing';
import { corruptJpeg, mediaFormDefinition, orientedJpeg, submitMedia } from './media-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** MEDIA_VARIANTS_AT_SUBMISSION: the worker makes image variants once the submission is stored. */
describe('media: variants made at submission time', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp({
      MEDIA_VARIANTS_AT_SUBMISSION: 'true',
      MEDIA_ROOT: mkdtempSync(join(tmpdir(), 'collect-media-variants-')),
    }, { worker: true });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(mediaFormDefinition('variants_at_intake')).expect(201)).body.formid;
  });
  afterAll(() => sut?.close());

  const item = async (submissionId: number) =>
    ((await request(sut.url).get(`/api/v1/media?instance=${submissionId}`).set('Authorization', owner.token).expect(200)).body as Array<{ id: number; filename: string; mimetype: string }>)[0];

  it('stores small, medium and large of an image before anyone asks; the first request only reads them', async () => {
    const jobs = sut.app.get(MediaVariantsQueue);
    const before = jobs.made;
    const submissionId = await submitMedia(sut, owner, formId, 'variants_at_intake', { instanceId: 'a5f1c0de-0000-4000-8000-000000000001', age: '30', photo: { name: 'site.jpg', data: await orientedJpeg(), type: 'image/jpeg' } });
    await waitFor(async () => jobs.made - before === 3, 20_000, 'the worker to make three variants');

    const photo = await item(submissionId);
    const storage = sut.app.get<FileStorage>(FILE_STORAGE);
    for (const v of ['small', 'medium', 'large'] as const) expect(await storage.exists(MediaVariantsService.variantPath(photo, v))).toBe(true);

    const variants = sut.app.get(MediaVariantsService);
    const generated = variants.generated;
    const res = await request(sut.url).get(`/api/v1/media/${photo.id}-small.jpg`).set('Authorization', owner.token).buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    }).expect(200);
    expect(variants.generated).toBe(generated);
    const meta = await sharp(res.body as Buffer).metadata();
    expect(Math.max(meta.width!, meta.height!)).toBe(240);
  });

  it('leaves an unreadable image to the request path: no variant, a clear 422 there, the original intact', async () => {
    const jobs = sut.app.get(MediaVariantsQueue);
    const submissionId = await submitMedia(sut, owner, formId, 'variants_at_intake', { instanceId: 'a5f1c0de-0000-4000-8000-000000000002', age: '31', photo: { name: 'broken.jpg', data: corruptJpeg(), type: 'image/jpeg' } });
    const broken = await item(submissionId);
    // The job runs and makes nothing for this submission.
    await expect(jobs.makeVariants({ submissionId })).resolves.toBe(0);
    expect(await sut.app.get<FileStorage>(FILE_STORAGE).exists(MediaVariantsService.variantPath(broken, 'small'))).toBe(false);
    await request(sut.url).get(`/api/v1/media/${broken.id}-small.jpg`).set('Authorization', owner.token).expect(422);
    await request(sut.url).get(`/api/v1/media/${broken.id}.jpg`).set('Authorization', owner.token).expect(200);
  });
});
