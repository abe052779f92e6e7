import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SEND_CHUNK_BYTES } from './file-sender.js';
import { FileNotFoundError } from './file-storage.js';
import { LocalFileStorage } from './local-file-storage.js';

/** A destination that keeps a copy of every chunk and calls back late (a slow client), so a reused buffer would show. */
function slowSink(delayMs: number): Writable & { bytes(): Buffer } {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _enc, cb) {
      // Copied only when the write completes: a buffer overwritten meanwhile would be caught here.
      setTimeout(() => {
        chunks.push(Buffer.from(chunk));
        cb();
      }, delayMs);
    },
  });
  return Object.assign(sink, { bytes: () => Buffer.concat(chunks) });
}

describe('local file sender (two reused buffers)', () => {
  const root = mkdtempSync(join(tmpdir(), 'collect-sender-'));
  const storage = new LocalFileStorage(root);
  // Several chunks and a partial one: every buffer is reused a few times.
  const content = randomBytes(SEND_CHUNK_BYTES * 5 + 1234);
  writeFileSync(join(root, 'file.bin'), content);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes the whole file byte for byte to a slow destination', async () => {
    const sender = await storage.openForSend('file.bin');
    const sink = slowSink(10);
    try {
      await sender.sendTo(sink);
    } finally {
      await sender.close();
    }
    expect(sink.bytes().equals(content)).toBe(true);
  });

  it('writes a byte range across chunk boundaries', async () => {
    const range = { start: SEND_CHUNK_BYTES - 10, end: SEND_CHUNK_BYTES * 3 + 17 };
    const sender = await storage.openForSend('file.bin', range);
    const sink = slowSink(1);
    await sender.sendTo(sink).finally(() => sender.close());
    expect(sink.bytes().equals(content.subarray(range.start, range.end + 1))).toBe(true);
  });

  it('stops when the destination is destroyed, and refuses a missing file', async () => {
    const sender = await storage.openForSend('file.bin');
    const sink = slowSink(2);
    setTimeout(() => sink.destroy(), 5);
    await sender.sendTo(sink).catch(() => undefined);
    await sender.close();
    expect(sink.bytes().length).toBeLessThan(content.length);
    await expect(storage.openForSend('missing.bin')).rejects.toBeInstanceOf(FileNotFoundError);
  });
});
