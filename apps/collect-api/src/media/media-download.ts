import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { FileSender } from '../storage/file-sender.js';
import type { ByteRange, FileStorage, StoredFileInfo } from '../storage/file-storage.js';
import { FileNotFoundError } from '../storage/file-storage.js';
import { contentDisposition, servedContentType, setInertHeaders } from '../storage/served-content.js';

export interface DownloadTarget {
  /** Storage-relative path. */
  path: string;
  mimetype: string;
  /** File name for Content-Disposition (without directories). */
  downloadName: string;
}

export interface DownloadOptions {
  /** A presigned URL to redirect full downloads to (S3 option); null streams through us. */
  presign?: (target: DownloadTarget, info: StoredFileInfo) => Promise<string | null>;
}

/**
 * A single `bytes=` range of a file of `size` bytes: the range, 'unsatisfiable', or null for
 * "send the whole file" (absent, malformed or multi-range headers: RFC 9110 lets us ignore them).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * Streams a stored file: Content-Type, Content-Length, Content-Disposition, ETag (304 on
 * If-None-Match), Range (206, 416), inert (CSP sandbox, nosniff, attachment; an active stored
 * type is served as application/octet-stream). Never buffers the file: local files are written
 * through two reused buffers (FileStorage.openForSend), other storage's stream is piped to the
 * socket with backpressure.
 */
export async function sendStoredFile(req: IncomingMessage, res: ServerResponse, storage: FileStorage, target: DownloadTarget, options: DownloadOptions = {}): Promise<void> {
  const info = await storage.stat(target.path);
  if (!info) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
  const etag = `"${info.etag}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', info.lastModified.toUTCString());
  // Access is checked per request: caches may keep the bytes but must revalidate with us.
  res.setHeader('Cache-Control', 'private, no-cache');
  setInertHeaders(res, target.downloadName);
  res.setHeader('Accept-Ranges', 'bytes');
  if (etagMatches(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== etag ? null : parseRange(req.headers.range, info.size);
  if (range === 'unsatisfiable') {
    res.statusCode = 416;
    res.setHeader('Content-Range', `bytes */${info.size}`);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ detail: 'Requested range not satisfiable.' }));
    return;
  }
  if (!range && options.presign) {
    const url = await options.presign(target, info);
    if (url) {
      res.statusCode = 302;
      res.setHeader('Location', url);
      res.end();
      return;
    }
  }
  let body: Readable | FileSender;
  try {
    body = storage.openForSend ? await storage.openForSend(target.path, range ?? undefined) : await storage.read(target.path, range ?? undefined);
  } catch (err) {
    if (err instanceof FileNotFoundError) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    throw err;
  }
  res.setHeader('Content-Type', servedContentType(target.mimetype));
  if (range) {
    res.statusCode = 206;
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    res.statusCode = 200;
    res.setHeader('Content-Length', String(info.size));
  }
  if (req.method === 'HEAD') {
    await close(body);
    res.end();
    return;
  }
  try {
    if ('sendTo' in body) {
      await body.sendTo(res);
      res.end();
    } else await pipeline(body, res);
  } catch {
    // Client went away or storage failed mid-stream: headers are out, all we can do is cut
    // the connection (the short body tells the client), and make sure the source is closed.
    res.destroy();
  } finally {
    await close(body);
  }
}

/** Releases a read stream or an opened file, whatever state it is in. */
async function close(body: Readable | FileSender): Promise<void> {
  if ('sendTo' in body) await body.close().catch(() => undefined);
  else body.destroy();
}
