import { Readable } from 'node:stream';
import type { FileStorage } from './file-storage.js';

/**
 * Files at most this large are read whole as soon as their archive entry is queued
 * (docs/media.md, "Media archives"); larger ones are opened when the archive reaches them. The
 * archive queues a few entries (EntryWindow), so what waits in memory is a few MB at most.
 */
export const READ_AHEAD_MAX_BYTES = 1024 * 1024;

/**
 * How to open a stored file's bytes when the archive reaches its entry, once. A small file is
 * read now, while the entries before it stream, in one buffer of its size where the storage can
 * (`readWhole`): reading one takes several round trips to libuv's thread pool, and made one after
 * the other when each entry's turn came those trips were a large part of an archive's time.
 * The call lets go of the bytes and of the file: yazl keeps every entry's stream function until
 * the archive ends, so a function holding them would keep the whole archive in memory.
 */
export function readAhead(size: number, file: StoredFile): () => Promise<Readable> {
  let source: StoredFile | null = file;
  let ahead: Promise<Buffer | null> | null = size <= READ_AHEAD_MAX_BYTES ? wholeFile(file, READ_AHEAD_MAX_BYTES) : null;
  // Read by the archive or not at all (a client that left): never an unhandled rejection.
  ahead?.catch(() => undefined);
  return () => {
    const [from, bytes] = [source, ahead];
    source = null;
    ahead = null;
    if (!from) return Promise.reject(new Error('an archive entry was opened twice'));
    if (!bytes) return from.storage.read(from.path);
    return bytes.then((b) => (b ? Readable.from([b], { objectMode: false }) : from.storage.read(from.path)));
  };
}

/** A stored file, as readAhead and wholeFile read it. */
export interface StoredFile {
  storage: Pick<FileStorage, 'read' | 'readWhole'>;
  path: string;
}

/**
 * The file's bytes in one buffer where the storage can (`readWhole`: open, stat, one read,
 * close), else its read stream collected; null when readWhole finds it larger than `maxBytes`.
 */
export async function wholeFile({ storage, path }: StoredFile, maxBytes: number): Promise<Buffer | null> {
  if (storage.readWhole) return storage.readWhole(path, maxBytes);
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.read(path)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
