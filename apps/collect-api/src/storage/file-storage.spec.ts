import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { startLocalS3, type LocalS3 } from '../../test/submissions-s3rver.js';
import { FileNotFoundError, type FileStorage } from './file-storage.js';
import { LocalFileStorage } from './local-file-storage.js';
import { presignS3Get, S3FileStorage } from './s3-file-storage.js';

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

interface Backend {
  sut: FileStorage;
  close(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'local disk',
    async () => {
      const root = mkdtempSync(join(tmpdir(), 'collect-storage-'));
      return { sut: new LocalFileStorage(root), close: async () => rmSync(root, { recursive: true, force: true }) };
    },
  ],
  [
    'S3-compatible (s3rver)',
    async () => {
      const s3: LocalS3 = await startLocalS3();
      const sut = new S3FileStorage({ endpoint: s3.endpoint, region: 'us-east-1', bucket: s3.bucket, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true, prefix: 'media' });
      return { sut, close: async () => { sut.destroy(); await s3.close(); } };
    },
  ],
];

describe.each(backends)('FileStorage: %s', (_name, make) => {
  let backend: Backend;
  let sut: FileStorage;
  let scratch: string;
  beforeAll(async () => {
    backend = await make();
    sut = backend.sut;
    scratch = mkdtempSync(join(tmpdir(), 'collect-scratch-'));
  });
  afterAll(async () => {
    await backend.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const path = 'alice/attachments/1_survey/photo.jpg';

  it('stores a local file and reads it back whole and by byte range', async () => {
    const src = join(scratch, 'a.bin');
    writeFileSync(src, '0123456789abcdef');
    const taken = await sut.moveFile(path, src, 'image/jpeg');
    // Taken over (renamed away) exactly when it says so; otherwise still there for the caller to remove.
    expect(existsSync(src)).toBe(!taken);
    expect(taken).toBe(sut.kind === 'local');
    expect(await text(await sut.read(path))).toBe('0123456789abcdef');
    expect(await text(await sut.read(path, { start: 2, end: 5 }))).toBe('2345');
    const info = await sut.stat(path);
    expect(info?.size).toBe(16);
    expect(info?.etag).toMatch(/\S/);
    expect(await sut.exists(path)).toBe(true);
  });

  it('stores bytes from memory, whole, also over a file already at the path', async () => {
    const other = 'alice/attachments/1_survey/bytes.jpg';
    await sut.putBytes(other, [Buffer.from('abc'), Buffer.alloc(0), Buffer.from('defgh')], 'image/jpeg');
    expect(await text(await sut.read(other))).toBe('abcdefgh');
    await sut.putBytes(other, [Buffer.from('xy')], 'image/jpeg');
    expect(await text(await sut.read(other))).toBe('xy');
    expect((await sut.stat(other))?.size).toBe(2);
    await sut.delete(other);
  });

  it('reads a small file whole where the backend can (local disk), null past the limit, missing files as FileNotFoundError', async () => {
    if (!sut.readWhole) {
      // An object store's archives collect the read stream instead (storage/read-ahead.ts).
      expect(sut.kind).toBe('s3');
      return;
    }
    const small = 'alice/attachments/1_survey/small.bin';
    const bytes = randomBytes(70_000);
    await sut.putBytes(small, [bytes], 'application/octet-stream');
    const whole = await sut.readWhole(small, 70_000);
    expect(whole?.equals(bytes)).toBe(true);
    expect(await sut.readWhole(small, 69_999)).toBeNull();
    await expect(sut.readWhole('alice/none.bin', 10)).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sut.readWhole('alice/attachments', 10)).rejects.toBeInstanceOf(FileNotFoundError);
    await sut.delete(small);
  });

  it('creates exclusively where the backend can (local disk): never over a file already at the path', async () => {
    if (!sut.putBytesIfAbsent || !sut.copyFileIfAbsent) {
      // An object store has no exclusive create here: intake reserves paths by their rows (docs/forms.md).
      expect(sut.kind).toBe('s3');
      return;
    }
    const claimed = 'alice/attachments/1_survey/claimed.jpg';
    expect(await sut.putBytesIfAbsent(claimed, [Buffer.from('first'), Buffer.alloc(0), Buffer.from('!')], 'image/jpeg')).toBe(true);
    expect(await sut.putBytesIfAbsent(claimed, [Buffer.from('second')], 'image/jpeg')).toBe(false);
    expect(await text(await sut.read(claimed))).toBe('first!');
    const src = join(scratch, 'spooled.bin');
    writeFileSync(src, 'spooled');
    expect(await sut.copyFileIfAbsent(claimed, src, 'image/jpeg')).toBe(false);
    expect(await text(await sut.read(claimed))).toBe('first!');
    const linked = 'alice/attachments/2_new_folder/linked.bin';
    expect(await sut.copyFileIfAbsent(linked, src, 'application/octet-stream')).toBe(true);
    expect(await text(await sut.read(linked))).toBe('spooled');
    expect(existsSync(src)).toBe(true); // the local file stays for its owner
    await sut.delete(claimed);
    await sut.delete(linked);
  });

  it('overwrites, stores streams, and deletes (missing files are not errors)', async () => {
    const n = await sut.putStream(path, Readable.from([Buffer.from('new'), Buffer.from(' content')]), 'text/plain');
    expect(n).toBe(11);
    expect(await text(await sut.read(path))).toBe('new content');
    await sut.delete(path);
    expect(await sut.exists(path)).toBe(false);
    expect(await sut.stat(path)).toBeNull();
    await sut.delete(path);
    await expect(sut.read(path)).rejects.toBeInstanceOf(FileNotFoundError);
  });

  it('reads ranges at the edges and reports a missing file on range reads too', async () => {
    await sut.putStream(path, Readable.from([Buffer.from('0123456789')]), 'text/plain');
    expect(await text(await sut.read(path, { start: 0, end: 0 }))).toBe('0');
    expect(await text(await sut.read(path, { start: 9, end: 9 }))).toBe('9');
    expect(await text(await sut.read(path, { start: 5, end: 9 }))).toBe('56789');
    await expect(sut.read('alice/none.bin', { start: 0, end: 1 })).rejects.toBeInstanceOf(FileNotFoundError);
    // Same content written again keeps reading right (etag may or may not change, size must not).
    expect((await sut.stat(path))?.size).toBe(10);
  });

  it('presigns GET URLs only where the backend can (object stores), carrying the response headers', async () => {
    if (!sut.presignGet) {
      expect(sut.kind).toBe('local');
      return;
    }
    await sut.putStream(path, Readable.from([Buffer.from('signed bytes')]), 'image/jpeg');
    const url = await sut.presignGet(path, { expiresInSeconds: 60, contentType: 'image/jpeg', contentDisposition: 'attachment; filename="photo.jpg"' });
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('signed bytes');
    expect(ok.headers.get('content-disposition')).toBe('attachment; filename="photo.jpg"');
    // s3rver checks the access key but not query signatures: signatures are checked against
    // AWS's published example below.
    expect((await fetch(url.replace('S3RVER%2F', 'OTHER%2F'))).status).toBe(403);
  });

  it('refuses paths that could escape the storage root', async () => {
    for (const bad of ['../etc/passwd', '/abs/file', 'a//b', 'a/./b', 'a\\b', 'a/\u0000b', '']) {
      await expect(sut.read(bad)).rejects.toThrow(/unsafe storage path/);
      await expect(sut.putStream(bad, Readable.from([Buffer.from('x')]), 'text/plain')).rejects.toThrow(/unsafe storage path/);
    }
  });
});

describe('S3 query-string presigning', () => {
  it('matches the AWS Signature V4 documentation example (GET examplebucket/test.txt)', () => {
    const url = presignS3Get({
      origin: 'https://examplebucket.s3.amazonaws.com',
      path: '/test.txt',
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      date: new Date('2013-05-24T00:00:00Z'),
      expiresInSeconds: 86400,
    });
    expect(url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
        '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    );
  });
});
