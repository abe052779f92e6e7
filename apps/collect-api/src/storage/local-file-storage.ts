import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { closeSync, constants as fsConstants, open as openCallback, unlinkSync, writevSync } from 'node:fs';
import { promisify } from 'node:util';
import { copyFile, link, mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileSender, type FileSender } from './file-sender.js';
import { assertSafeStoragePath, FileNotFoundError, type ByteRange, type FileStorage, type StoredFileInfo } from './file-storage.js';

const MADE_DIRS_MAX = 10_000;
const openFd = promisify(openCallback);

/** What is left of `chunks` once `written` bytes of them are written (a `writev` may write less than asked). */
function unwritten(chunks: Buffer[], written: number): Buffer[] {
  const left: Buffer[] = [];
  for (const c of chunks) {
    if (written >= c.length) written -= c.length;
    else {
      left.push(c.subarray(written));
      written = 0;
    }
  }
  return left;
}

/** Writes `chunks` to a file opened with `flags`: one open, one writev (more only if the system writes less), one close. */
async function writeNew(file: string, chunks: Buffer[], flags: 'w' | 'wx'): Promise<void> {
  const handle = await open(file, flags);
  try {
    for (let rest = chunks.filter((c) => c.length > 0); rest.length; ) rest = unwritten(rest, (await handle.writev(rest)).bytesWritten);
  } finally {
    await handle.close();
  }
}

/**
 * `chunks` (an upload held in memory: at most IN_MEMORY_REQUEST_BYTES, openrosa/multipart.ts) as a
 * new file: false when a file is there. The exclusive create goes to the thread pool: creating a
 * file can take the file system's slow path (ext4 allocating an inode, a directory insert, a
 * journal wait), timed at p50 0.1 to 0.6 ms, p99 2 ms and up to 20 ms on a busy machine, and on
 * the event loop every other request waited for it; the `writev` (100 KB to the page cache,
 * p50 about 40 µs) and `close` stay synchronous, sparing two thread-pool round trips
 * (docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place"). A write that fails removes the file it created.
 */
async function writeNewFromMemory(file: string, chunks: Buffer[]): Promise<boolean> {
  let fd: number;
  try {
    fd = await openFd(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    for (let rest = chunks.filter((c) => c.length > 0); rest.length; ) rest = unwritten(rest, writevSync(fd, rest));
  } catch (err) {
    closeSync(fd);
    unlinkSync(file);
    throw err;
  }
  closeSync(fd);
  return true;
}

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
   * The local file is renamed into place: one file-system operation, no byte copied, and atomic
   * (a reader sees the old file or the new one, never a part). Intake used to link it under a
   * temporary name, rename that over the target and unlink the original: three operations
   * (docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place"). Across file systems
   * (UPLOAD_TMP_DIR and MEDIA_ROOT on different mounts) rename fails with EXDEV: the bytes are
   * then copied under a temporary name that is renamed over the target, and the local file is
   * left to its owner.
   */
  async moveFile(path: string, localFile: string, _contentType: string): Promise<boolean> {
    const target = this.full(path);
    if (await this.withinFileSystem('renaming', () => this.inDir(dirname(target), () => rename(localFile, target)))) return true;
    const tmp = `${target}.part-${process.pid}-${Date.now()}`;
    try {
      await this.inDir(dirname(target), () => copyFile(localFile, tmp));
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return false;
  }

  /**
   * Bytes in memory: written straight to the target, created new (open with `wx`, one `writev`,
   * close), not under a temporary name: the paths intake writes are reserved by an attachment row
   * not yet committed, so nothing reads the file before it is whole. A file already there (left by
   * an interrupted earlier write) is replaced whole: temporary name, then rename.
   */
  async putBytes(path: string, chunks: Buffer[], _contentType: string): Promise<void> {
    const target = this.full(path);
    try {
      await this.inDir(dirname(target), () => writeNew(target, chunks, 'wx'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const tmp = `${target}.part-${process.pid}-${Date.now()}`;
      try {
        await writeNew(tmp, chunks, 'w');
        await rename(tmp, target);
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
    }
  }

  /**
   * Bytes in memory, created new at `path` (open with `wx`, one `writev`, close:
   * writeNewFromMemory) or not at all: false when a file is there (FileStorage.putBytesIfAbsent).
   * A write that fails after the create removes the part it made.
   */
  async putBytesIfAbsent(path: string, chunks: Buffer[], _contentType: string): Promise<boolean> {
    const target = this.full(path);
    return this.inDir(dirname(target), () => writeNewFromMemory(target, chunks));
  }

  /**
   * A spooled upload linked into place (`link` fails when the target exists: exclusive, and
   * atomic, a reader never sees a part), or across file systems copied with COPYFILE_EXCL
   * (nothing reads the path before its row commits). The local file stays for its owner.
   */
  async copyFileIfAbsent(path: string, localFile: string, _contentType: string): Promise<boolean> {
    const target = this.full(path);
    try {
      if (await this.withinFileSystem('linking', () => this.inDir(dirname(target), () => link(localFile, target)))) return true;
      // COPYFILE_EXCL fails with EEXIST before writing anything; any other failure is of our own copy.
      try {
        await this.inDir(dirname(target), () => copyFile(localFile, target, fsConstants.COPYFILE_EXCL));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' && (err as NodeJS.ErrnoException).code !== 'ENOENT') await rm(target, { force: true }).catch(() => undefined);
        throw err;
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  /** Links and renames are tried until one crosses file systems (EXDEV): that will not change. */
  private readonly sameFileSystem = { linking: true, renaming: true };

  /**
   * Runs `op` (a link or rename: one file system only) unless one of its kind crossed file systems
   * before: true when it ran, false when the caller must copy instead.
   */
  private async withinFileSystem(kind: 'linking' | 'renaming', op: () => Promise<void>): Promise<boolean> {
    if (!this.sameFileSystem[kind]) return false;
    try {
      await op();
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      this.sameFileSystem[kind] = false;
      return false;
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

  async readWhole(path: string, maxBytes: number): Promise<Buffer | null> {
    const { handle, size } = await this.openFile(path);
    try {
      if (size > maxBytes) return null;
      // One buffer of the file's size: a read stream's 64 KB chunks and their concatenation
      // allocated about twice as much, and external memory paces V8's full collections
      // (docs/media.md, "Media archives").
      const bytes = Buffer.allocUnsafeSlow(size);
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await handle.read(bytes, filled, size - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return bytes.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  localPath(path: string): string {
    return this.full(path);
  }

  async openForSend(path: string, range?: ByteRange): Promise<FileSender> {
    const { handle, size } = await this.openFile(path);
    return fileSender(handle, size, range);
  }

  /** The regular file at `path`, opened to read, with its size; FileNotFoundError otherwise (nothing left open). */
  private async openFile(path: string): Promise<{ handle: FileHandle; size: number }> {
    const handle = await open(this.full(path), 'r').catch(() => null);
    if (!handle) throw new FileNotFoundError(path);
    const info = await handle.stat().catch(() => null);
    if (!info?.isFile()) {
      await handle.close();
      throw new FileNotFoundError(path);
    }
    return { handle, size: info.size };
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
