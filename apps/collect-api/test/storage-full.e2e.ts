import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { FILE_STORAGE, type FileStorage } from '../src/storage/file-storage.js';
import { listFiles } from './data-fixtures.js';
import { demoInstance, demoXForm, jpeg } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** The error the kernel gives a write to a full file system: /dev/full refuses every write with it. */
function kernelEnospc(): NodeJS.ErrnoException {
  const fd = openSync('/dev/full', 'w');
  try {
    writeSync(fd, Buffer.from('x'));
  } catch (err) {
    return err as NodeJS.ErrnoException;
  } finally {
    closeSync(fd);
  }
  throw new Error('/dev/full accepted a write');
}

/**
 * The media volume full (docs/api-conventions.md, "Errors"): the storage's writes fail with the
 * kernel's ENOSPC, as a full disk makes them fail. The phone gets 507, not 500, nothing of the
 * submission is kept, and the same submission sent once there is room again is stored once.
 */
describe('a full media volume: 507, nothing kept, the same submission stored once room is back', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let media: string;

  beforeAll(async () => {
    media = mkdtempSync(join(tmpdir(), 'collect-full-'));
    sut = await startTestCollectApp({ MEDIA_ROOT: media });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('full_form')), 'form.xml').expect(201)).body.formid;
  });
  afterAll(() => sut.close());

  it('answers 507 with Retry-After while every write fails with ENOSPC, then 201 once', async () => {
    const storage = sut.app.get<FileStorage>(FILE_STORAGE);
    const enospc = kernelEnospc();
    expect(enospc.code).toBe('ENOSPC');
    const writes = ['putBytes', 'putBytesIfAbsent', 'copyFileIfAbsent', 'moveFile', 'putStream'] as const;
    const saved = new Map<string, unknown>();
    for (const name of writes) {
      const fn = (storage as unknown as Record<string, unknown>)[name];
      if (typeof fn !== 'function') continue;
      saved.set(name, fn);
      (storage as unknown as Record<string, unknown>)[name] = () => Promise.reject(enospc);
    }
    expect(saved.size).toBeGreaterThan(0);
    const photo = await jpeg();
    const send = () =>
      request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
        .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: 'cccccccc-3333-4333-8333-333333333333', idString: 'full_form' })), { filename: 'submission.xml', contentType: 'text/xml' })
        .attach('house.jpg', photo, { filename: 'house.jpg', contentType: 'image/jpeg' });
    const before = listFiles(media);

    const refused = await send();
    expect(refused.status).toBe(507);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.text).toContain('no room left');
    const rows = async () => (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body as unknown[];
    expect(await rows()).toHaveLength(0);
    expect(listFiles(media)).toEqual(before);

    for (const [name, fn] of saved) (storage as unknown as Record<string, unknown>)[name] = fn;
    await send().expect(201);
    await send().expect(202);
    expect(await rows()).toHaveLength(1);
  });
});
