import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { collected } from '@collect/testing';
import { READ_AHEAD_MAX_BYTES, readAhead } from './read-ahead.js';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stored file, read in chunks of 64 KB as fs gives them, or whole when `whole`; counts the reads. */
function storedFile(bytes: Buffer, { whole = false } = {}) {
  const reads = { stream: 0, whole: 0 };
  const read = () => {
    reads.stream++;
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 65536) chunks.push(bytes.subarray(i, i + 65536));
    return Promise.resolve(Readable.from(chunks, { objectMode: false }));
  };
  const readWhole = (_path: string, max: number) => {
    reads.whole++;
    return Promise.resolve(bytes.length > max ? null : Buffer.from(bytes));
  };
  return { file: { storage: whole ? { read, readWhole } : { read }, path: 'f' }, reads };
}

describe('readAhead', () => {
  it('reads a small file when the entry is queued, and gives its bytes as a byte stream', async () => {
    const bytes = randomBytes(100_000);
    const { file, reads } = storedFile(bytes);
    const later = readAhead(bytes.length, file);
    expect(reads.stream).toBe(1);
    const stream = await later();
    expect(stream.readableObjectMode).toBe(false);
    expect((await bytesOf(stream)).equals(bytes)).toBe(true);
    expect(reads.stream).toBe(1);
  });

  it('reads it in one piece where the storage can, and streams a file that turned out larger', async () => {
    const bytes = randomBytes(100_000);
    const small = storedFile(bytes, { whole: true });
    expect((await bytesOf(await readAhead(bytes.length, small.file)())).equals(bytes)).toBe(true);
    expect(small.reads).toEqual({ stream: 0, whole: 1 });
    // The size the caller knew was small; the file is not (readWhole answers null): it is streamed.
    const large = storedFile(randomBytes(READ_AHEAD_MAX_BYTES + 1), { whole: true });
    expect((await bytesOf(await readAhead(10, large.file)())).length).toBe(READ_AHEAD_MAX_BYTES + 1);
    expect(large.reads).toEqual({ stream: 1, whole: 1 });
  });

  it('lets go of the bytes once it has handed them over, while the archive still holds the function (yazl keeps it)', async () => {
    const { file, reads } = storedFile(randomBytes(100_000));
    const later = readAhead(100_000, file);
    // The archive reads the stream to its end and drops it; only a weak reference stays here.
    const held = await (async () => new WeakRef((await (await later()).toArray())[0] as Buffer))();
    expect(await collected(held)).toBe(true);
    await expect(later()).rejects.toThrow('opened twice');
    expect(reads.stream).toBe(1);
  });

  it('opens a file larger than the limit only when the archive reaches it, and streams it', async () => {
    const bytes = randomBytes(READ_AHEAD_MAX_BYTES + 1);
    const { file, reads } = storedFile(bytes, { whole: true });
    const later = readAhead(bytes.length, file);
    expect(reads).toEqual({ stream: 0, whole: 0 });
    expect((await bytesOf(await later())).equals(bytes)).toBe(true);
    expect(reads).toEqual({ stream: 1, whole: 0 });
  });

  it('hands a file that cannot be opened to the archive as the error, not as an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const later = readAhead(10, { storage: { read: () => Promise.reject(new Error('gone')) }, path: 'f' });
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      await expect(later()).rejects.toThrow('gone');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('hands a read that fails midway to the archive as the error', async () => {
    const read = () => {
      const stream = new Readable({ read() {} });
      stream.push(Buffer.alloc(10));
      setImmediate(() => stream.destroy(new Error('EIO')));
      return Promise.resolve(stream);
    };
    await expect(readAhead(20, { storage: { read }, path: 'f' })()).rejects.toThrow('EIO');
  });
});
