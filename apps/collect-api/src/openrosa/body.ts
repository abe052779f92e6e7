import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { HttpErrorWithHeaders } from '@collect/contracts';

export function contentTypeOf(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

export function isXmlContentType(type: string): boolean {
  return type === 'application/xml' || type === 'text/xml';
}

/** 413 for a body refused before its end: the connection is closed so the rest is never read. */
function bodyTooLarge(detail: string): HttpErrorWithHeaders {
  return new HttpErrorWithHeaders(413, detail, { Connection: 'close' });
}

/**
 * The raw request body as UTF-8, at most `max` bytes: a larger Content-Length is refused before
 * reading, a body that grows past `max` as soon as it does (413, connection closed).
 */
export async function readRawBody(req: IncomingMessage, max: number): Promise<string> {
  const detail = `The body is larger than ${max} bytes.`;
  if (Number(req.headers['content-length'] ?? 0) > max) throw bodyTooLarge(detail);
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      // Stop reading without destroying the socket: the 413 must still reach the client.
      req.off('data', onData);
      req.pause();
      reject(bodyTooLarge(detail));
    };
    req.on('data', onData);
    req.on('end', () => resolve());
    req.on('error', () => reject(new HttpErrorWithHeaders(400, 'Request aborted.', {})));
  });
  return Buffer.concat(chunks).toString('utf8');
}

/** One file (or field) part of a multipart body, buffered, at most `max` bytes; null if absent. */
export async function readMultipartPart(req: IncomingMessage, name: string, max: number): Promise<string | null> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: req.headers, limits: { fileSize: max, fieldSize: max, files: 5, fields: 20 } });
  } catch {
    throw new HttpErrorWithHeaders(415, 'Expected multipart/form-data with a boundary.', {});
  }
  let value: string | null = null;
  let tooLarge = false;
  const parts: Array<Promise<void>> = [];
  bb.on('field', (field, v, info) => {
    if (field !== name) return;
    if (info.valueTruncated) tooLarge = true;
    else value = v;
  });
  bb.on('file', (field, stream) => {
    // A truncated body fails the part stream as well as busboy; unheard, it would be uncaught.
    stream.on('error', () => undefined);
    if (field !== name) {
      stream.resume();
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('limit', () => (tooLarge = true));
    parts.push(new Promise((resolve) => stream.on('close', () => {
      value = Buffer.concat(chunks).toString('utf8');
      resolve();
    })));
  });
  await new Promise<void>((resolve, reject) => {
    bb.on('close', resolve);
    bb.on('error', (err: Error) => reject(new HttpErrorWithHeaders(400, `Malformed multipart body: ${err.message}`, {})));
    req.pipe(bb);
  });
  await Promise.all(parts);
  if (tooLarge) throw new HttpErrorWithHeaders(413, `The "${name}" part is larger than ${max} bytes.`, {});
  return value;
}
