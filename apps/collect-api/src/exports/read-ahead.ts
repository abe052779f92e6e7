import { Readable } from 'node:stream';

/**
 * Files at most this large are read whole as soon as their archive entry is queued
 * (docs/media.md, "Media archives"); larger ones are opened when the archive reaches them. The
 * archive queues a few entries (EntryWindow), so what waits in memory is a few MB at most.
 */
export const READ_AHEAD_MAX_BYTES = 1024 * 1024;

/**
 * How to open an entry's bytes when the archive reaches it. A small file is read now, while the
 * entries before it stream: reading one takes several round trips to libuv's thread pool (stat,
 * open, reads, close), and made one after the other when each entry's turn came those trips were
 * most of an archive's time. A file that turns out larger than `size` said is read as it comes,
 * not cut.
 */
export function readAhead(size: number, open: () => Promise<Readable>): () => Promise<Readable> {
  if (size > READ_AHEAD_MAX_BYTES) return open;
  const bytes = open().then(async (stream) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  });
  // Read by the archive or not at all (a client that left): never an unhandled rejection.
  bytes.catch(() => undefined);
  return () => bytes.then((b) => Readable.from([b], { objectMode: false }));
}
