import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { collected } from '@collect/testing';
import { READ_AHEAD_MAX_BYTES, readAhead } from './read-ahead.js';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A file's stream in chunks of 64 KB, as fs gives it; counts the times it is opened. */
function storedFile(bytes: Buffer) {
  const opened = { count: 0 };
  const open = () => {
    opened.count++;
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 65536) chunks.push(bytes.subarray(i, i + 65536));
    return Promise.resolve(Readable.from(chunks, { objectMode: false }));
  };
  return { open, opened };
}

describe('readAhead', () => {
  it('reads a small file when the entry is queued, and gives its bytes as a byte stream', async () => {
    const bytes = randomBytes(100_000);
    const file = storedFile(bytes);
    const later = readAhead(bytes.length, file.open);
    expect(file.opened.count).toBe(1);
    const stream = await later();
    expect(stream.readableObjectMode).toBe(false);
    expect((await bytesOf(stream)).equals(bytes)).toBe(true);
    expect(file.opened.count).toBe(1);
  });

  it('lets go of the bytes once it has handed them over, while the archive still holds the function (yazl keeps it)', async () => {
    const file = storedFile(randomBytes(100_000));
    const later = readAhead(100_000, file.open);
    // The archive reads the stream to its end and drops it; only a weak reference stays here.
    const held = await (async () => new WeakRef((await (await later()).toArray())[0] as Buffer))();
    expect(await collected(held)).toBe(true);
    await expect(later()).rejects.toThrow('opened twice');
    expect(file.opened.count).toBe(1);
  });

  it('opens a file larger than the limit only when the archive reaches it, and streams it', async () => {
    const bytes = randomBytes(READ_AHEAD_MAX_BYTES + 1);
    const file = storedFile(bytes);
    const later = readAhead(bytes.length, file.open);
    expect(file.opened.count).toBe(0);
    expect((await bytesOf(await later())).equals(bytes)).toBe(true);
    expect(file.opened.count).toBe(1);
  });

  it('hands a file that cannot be opened to the archive as the error, not as an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const later = readAhead(10, () => Promise.reject(new Error('gone')));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      await expect(later()).rejects.toThrow('gone');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('hands a read that fails midway to the archive as the error', async () => {
    const failing = () => {
      const stream = new Readable({ read() {} });
      stream.push(Buffer.alloc(10));
      setImmediate(() => stream.destroy(new Error('EIO')));
      return Promise.resolve(stream);
    };
    await expect(readAhead(20, failing)()).rejects.toThrow('EIO');
  });
});
