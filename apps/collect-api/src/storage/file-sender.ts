import type { FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { ByteRange } from './byte-range.js';

/** Bytes per read; two buffers of this size per download in flight. */
export const SEND_CHUNK_BYTES = 64 * 1024;

/** An opened file (or byte range of it) to write to one destination, then close. */
export interface FileSender {
  /** Writes the bytes to `out` (not ended); stops when `out` is destroyed. Rejects when a write fails. */
  sendTo(out: Writable): Promise<void>;
  close(): Promise<void>;
}

/** Writes `chunk` and waits until `out` is done with it (its callback: handed to the socket or the next stream). */
function written(out: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    out.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * The bytes of an open file (all of it, or `range`) through two buffers that are reused: one is
 * read into while the other is being written, and a buffer is read into again only once the
 * write of its previous bytes has called back. A read stream allocates a new 64 KB buffer per
 * read, which V8 frees only when a collection finds it dead: across a 1 GB download that garbage
 * grew the process by up to V8's external-memory threshold (about 64 MB) before a collection ran
 * (docs/operations.md, "Images"); here the download holds 128 KB.
 * Resolves early (short) if the file shrinks meanwhile.
 */
export function fileSender(handle: FileHandle, size: number, range?: ByteRange): FileSender {
  return {
    async sendTo(out: Writable): Promise<void> {
      const buffers = [Buffer.allocUnsafe(SEND_CHUNK_BYTES), Buffer.allocUnsafe(SEND_CHUNK_BYTES)];
      let position = range ? range.start : 0;
      const end = range ? range.end + 1 : size;
      let previous: Promise<void> = Promise.resolve();
      for (let turn = 0; position < end && !out.destroyed; turn++) {
        // This buffer's last write was two turns ago and was waited for last turn.
        const buffer = buffers[turn % 2];
        const { bytesRead } = await handle.read(buffer, 0, Math.min(SEND_CHUNK_BYTES, end - position), position);
        if (bytesRead === 0) break;
        position += bytesRead;
        await previous;
        if (out.destroyed) break;
        previous = written(out, buffer.subarray(0, bytesRead));
      }
      await previous;
    },
    close: () => handle.close(),
  };
}
