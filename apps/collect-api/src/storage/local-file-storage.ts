import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSafeStoragePath, FileNotFoundError, type ByteRange, type FileStorage, type StoredFileInfo } from './file-storage.js';

const MADE_DIRS_MAX = 10_000;

/** Files under a root directory (default: the data directory), written via temp name + rename. */
export class LocalFileStorage implements FileStorage {
  readonly kind = 'local' as const;
  private readonly root: string;
  /** Folders this process created or found (bounded). */
  private readonly madeDirs = new Set<string>();

  constructor(root: string) {
    this.root = resolve(root);
  }

  private full(path: string): string {
    assertSafeStoragePath(path);
    return join(this.root, path);
  }

  /**
   * The bytes are not copied when they need not be: the local file gets a second name (a hard
   * link) in the storage folder, then that name is renamed over the target (atomic, overwrites).
   * The caller's file stays where it was (it may store it again, and removes it itself); the
   * file's bytes are never written to again by either. Across file systems (UPLOAD_TMP_DIR and
   * MEDIA_ROOT on different mounts), or where links are not allowed, it is copied as before.
   */
  async putFile(path: string, localFile: string, _contentType: string): Promise<void> {
    const target = this.full(path);
    const tmp = `${target}.part-${process.pid}-${Date.now()}`;
    try {
      await this.inDir(dirname(target), () => (this.linking ? link(localFile, tmp).catch((err: NodeJS.ErrnoException) => this.copyInstead(err, localFile, tmp)) : copyFile(localFile, tmp)));
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /** Links are tried until one fails for a reason that will not change (another file system, not allowed). */
  private linking = true;

  private async copyInstead(err: NodeJS.ErrnoException, localFile: string, tmp: string): Promise<void> {
    if (!['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'EACCES'].includes(err.code ?? '')) throw err;
    if (err.code !== 'EMLINK') this.linking = false;
    await copyFile(localFile, tmp);
  }

  /**
   * Runs `write` in `dir`, creating the directory first unless this process did so before
   * (intake writes into a few folders over and over: docs/benchmarks.md); a folder removed
   * meanwhile (ENOENT) is created again and the write retried once.
   */
  private async inDir<T>(dir: string, write: () => Promise<T>): Promise<T> {
    if (!this.madeDirs.has(dir)) {
      await mkdir(dir, { recursive: true });
      if (this.madeDirs.size >= MADE_DIRS_MAX) this.madeDirs.clear();
      this.madeDirs.add(dir);
    }
    try {
      return await write();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.madeDirs.delete(dir);
      await mkdir(dir, { recursive: true });
      return write();
    }
  }

  async putStream(path: string, body: Readable, _contentType: string): Promise<number> {
    const target = this.full(path);
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.part-${process.pid}-${Date.now()}`;
    let size = 0;
    body.on('data', (chunk: Buffer) => (size += chunk.length));
    try {
      await pipeline(body, createWriteStream(tmp));
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return size;
  }

  async read(path: string, range?: ByteRange): Promise<Readable> {
    const full = this.full(path);
    const info = await stat(full).catch(() => null);
    if (!info?.isFile()) throw new FileNotFoundError(path);
    return createReadStream(full, range ? { start: range.start, end: range.end } : {});
  }

  async stat(path: string): Promise<StoredFileInfo | null> {
    const info = await stat(this.full(path)).catch(() => null);
    if (!info?.isFile()) return null;
    // Size + mtime identify a version of a file written whole by rename; cheap, no re-read.
    const etag = createHash('sha1').update(`${path}:${info.size}:${info.mtimeMs}`).digest('hex');
    return { size: info.size, etag, lastModified: info.mtime };
  }

  async exists(path: string): Promise<boolean> {
    return (await this.stat(path)) !== null;
  }

  async delete(path: string): Promise<void> {
    await rm(this.full(path), { force: true });
  }
}
