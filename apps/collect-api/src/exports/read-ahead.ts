import { Readable } from 'node:stream';

/**
 * Files at most this large are read whole as soon as their archive entry is queued
 * (docs/media.md, "Media archives"); larger ones are opened when the archive reaches them. The
 * archive queues a few entries (EntryWindow), so what waits in memory is a few MB at most.
 */
export const READ_AHEAD_MAX_BYTES = 1024 * 1024;

/**
 * How to open an entry's bytes when the archive reaches it, once. A small file is read now,
 * while the entries before it stream: reading one takes several round trips to libuv's thread
 * pool (stat, open, reads, close), and made one after the other when each entry's turn came
 * those trips were a large part of an archive's time. The call lets go of the bytes and of
 * `open`: yazl keeps every entry's stream function until the archive ends, so a function holding
 * them would keep the whole archive in memory.
 */
export function readAhead(size: number, open: () => Promise<Readable>): () => Promise<Readable> {
  let opener: (() => Promise<Readable>) | null = open;
  let ahead: Promise<Buffer> | null = size <= READ_AHEAD_MAX_BYTES ? bytesOf(open) : null;
  // Read by the archive or not at all (a client that left): never an unhandled rejection.
  ahead?.catch(() => undefined);
  return () => {
    const [first, bytes] = [opener, ahead];
    opener = null;
    ahead = null;
    if (!first) return Promise.reject(new Error('an archive entry was opened twice'));
    return bytes ? bytes.then((b) => Readable.from([b], { objectMode: false })) : first();
  };
}

async function bytesOf(open: () => Promise<Readable>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
