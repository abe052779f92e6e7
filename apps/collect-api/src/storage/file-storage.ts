import type { Readable } from 'node:stream';
import type { ByteRange } from './byte-range.js';
import type { FileSender } from './file-sender.js';

export type { ByteRange } from './byte-range.js';

export interface StoredFileInfo {
  size: number;
  /** Strong validator for ETag (content hash or the backend's own etag), quotes excluded. */
  etag: string;
  lastModified: Date;
}


/**
 * Where attachment files live. Paths are storage-relative
 * (`{username}/attachments/{formid}_{id_string}/{file}`), the same for every backend, so the
 * `filename` of an attachment works whichever backend stores it. Implementations stream:
 * nothing holds a whole file in memory, except what the caller already holds (putBytes: a
 * small upload).
 */
export interface FileStorage {
  readonly kind: 'local' | 's3';
  /**
   * Stores the local file at `path` (overwriting) and may take it over: true when the local file
   * is gone (local storage renames it into place: one file-system operation), false when it is
   * still there for the caller to remove (S3 uploads a copy; a copy across file systems).
   */
  moveFile(path: string, localFile: string, contentType: string): Promise<boolean>;
  /**
   * Stores bytes already in memory (a small upload: openrosa/multipart.ts IN_MEMORY_REQUEST_BYTES)
   * at `path` (overwriting).
   */
  putBytes(path: string, chunks: Buffer[], contentType: string): Promise<void>;
  /**
   * Exclusive creation (local storage only; an object store has no cheap equivalent here): stores
   * `chunks` at `path` only when nothing is there yet, false when something is (nothing written;
   * a failed write removes its part). On local storage the intake claims an attachment's storage
   * path this way, before or after its row (docs/forms.md, "Attachment storage paths"), so the
   * file can be written before the one statement that stores the instance.
   */
  putBytesIfAbsent?(path: string, chunks: Buffer[], contentType: string): Promise<boolean>;
  /**
   * Exclusive creation from a local file (a spooled upload), which stays for its owner to remove:
   * false when something is at `path` already. Local storage only (see putBytesIfAbsent).
   */
  copyFileIfAbsent?(path: string, localFile: string, contentType: string): Promise<boolean>;
  /** Stores a stream at `path` (overwriting); returns the byte count. */
  putStream(path: string, body: Readable, contentType: string): Promise<number>;
  /** A read stream of the file (or of a byte range). Rejects with FileNotFoundError. */
  read(path: string, range?: ByteRange): Promise<Readable>;
  /**
   * Local storage only: the file (or a byte range) opened to be written to one response through
   * two reused buffers (storage/file-sender.ts; a download then leaves no garbage per chunk).
   * Rejects with FileNotFoundError; the caller closes it.
   */
  openForSend?(path: string, range?: ByteRange): Promise<FileSender>;
  /**
   * Local storage only: the whole file in one buffer of its size (open, stat, one read, close),
   * or null when it is larger than `maxBytes` (the caller streams it then). Rejects with
   * FileNotFoundError. The archives read small files ahead with it (storage/read-ahead.ts).
   */
  readWhole?(path: string, maxBytes: number): Promise<Buffer | null>;
  /**
   * Local storage only: where the file is on this machine, for a reader in another thread (the
   * decrypted archive's crypto threads, docs/encryption.md). Checks the path as every call does.
   */
  localPath?(path: string): string;
  stat(path: string): Promise<StoredFileInfo | null>;
  exists(path: string): Promise<boolean>;
  /** Deletes; a missing file is not an error. */
  delete(path: string): Promise<void>;
  /**
   * A short-lived URL that serves the file without us (object stores only; local disk has
   * none). The response headers it asks the store to send are part of the signature.
   */
  presignGet?(path: string, options: PresignOptions): Promise<string>;
}

export interface PresignOptions {
  expiresInSeconds: number;
  contentType: string;
  contentDisposition: string;
}

export const FILE_STORAGE = Symbol('FILE_STORAGE');

export class FileNotFoundError extends Error {
  constructor(path: string) {
    super(`file not found: ${path}`);
    this.name = 'FileNotFoundError';
  }
}

/**
 * Refuses paths that could leave the storage root or confuse object stores: absolute paths,
 * `..`/`.` segments, backslashes, control characters, empty segments.
 */
export function assertSafeStoragePath(path: string): void {
  const bad =
    !path ||
    path.length > 1024 ||
    path.startsWith('/') ||
    path.includes('\\') ||
    /[\x00-\x1f\x7f]/.test(path) ||
    path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..');
  if (bad) throw new Error(`unsafe storage path: ${JSON.stringify(path)}`);
}

/** One path segment made of safe characters (a user name, a file name), at most 200 of them. */
export function safeStorageSegment(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 200);
  return cleaned || 'file';
}
