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

/** Every write of `storage` fails with `err` until the returned function is called. */
function failWrites(storage: FileStorage, err: Error): () => void {
  const target = storage as unknown as Record<string, unknown>;
  const saved = new Map<string, unknown>();
  for (const name of ['putBytes', 'putBytesIfAbsent', 'copyFileIfAbsent', 'moveFile', 'putStream']) {
    if (typeof target[name] !== 'function') continue;
    saved.set(name, target[name]);
    target[name] = () => Promise.reject(err);
  }
  expect(saved.size).toBeGreaterThan(0);
  return () => {
    for (const [name, fn] of saved) target[name] = fn;
  };
}

/**
 * The media volume full (docs/api-conventions.md, "Errors"): the storage's writes fail with the
 * kernel's ENOSPC, as a full disk makes them fail. The phone gets 507, not 500, nothing of the
 * submission is kept, and the same submission sent once there is room again is stored once. No
 * file handle left (EMFILE) is a 503 the same way.
 */
describe('a full media volume: 507, nothing kept, the same submission stored once room is back', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let media: string;
  let photo: Buffer;

  beforeAll(async () => {
    media = mkdtempSync(join(tmpdir(), 'collect-full-'));
    sut = await startTestCollectApp({ MEDIA_ROOT: media });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('full_form')), 'form.xml').expect(201)).body.formid;
    photo = await jpeg();
  });
  afterAll(() => sut.close());

  const send = (instanceId: string) =>
    request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId, idString: 'full_form' })), { filename: 'submission.xml', contentType: 'text/xml' })
      .attach('house.jpg', photo, { filename: 'house.jpg', contentType: 'image/jpeg' });
  const uuids = async () => ((await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body as Array<{ _uuid: string }>).map((r) => r._uuid).sort();

  it('answers 507 with Retry-After while every write fails with ENOSPC, then 201 once', async () => {
    const enospc = kernelEnospc();
    expect(enospc.code).toBe('ENOSPC');
    const restore = failWrites(sut.app.get<FileStorage>(FILE_STORAGE), enospc);
    const id = 'cccccccc-3333-4333-8333-333333333333';
    const before = listFiles(media);
    const refused = await send(id);
    expect(refused.status).toBe(507);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.text).toContain('no room left');
    expect(await uuids()).toEqual([]);
    expect(listFiles(media)).toEqual(before);

    restore();
    await send(id).expect(201);
    await send(id).expect(202);
    expect(await uuids()).toEqual([id]);
  });

  it('answers 503 with Retry-After while no file handle is left (EMFILE), then 201', async () => {
    const emfile = Object.assign(new Error('EMFILE: too many open files, open'), { code: 'EMFILE', errno: -24, syscall: 'open' });
    const restore = failWrites(sut.app.get<FileStorage>(FILE_STORAGE), emfile);
    const id = 'dddddddd-4444-4444-8444-444444444444';
    const refused = await send(id);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    restore();
    await send(id).expect(201);
    expect(await uuids()).toContain(id);
  });
});
