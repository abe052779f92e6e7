import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSafeStoragePath, FileNotFoundError, type ByteRange, type FileStorage, type StoredFileInfo } from './file-storage.js';

const MADE_DIRS_MAX = 10_000;

/** Files under a root directory (default: the data directory), written via temp file + rename. */
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

  async putFile(path: string, localFile: string, _contentType: string): Promise<void> {
    const target = this.full(path);
    const tmp = `${target}.part-${process.pid}-${Date.now()}`;
    try {
      await this.inDir(dirname(target), () => copyFile(localFile, tmp));
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
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
