import type { IncomingMessage } from 'node:http';
import { basename } from 'node:path';
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

/** A file part of a multipart form, buffered. */
export interface MultipartFilePart {
  /** The client's file name, reduced to its base name ('' when it gave none). */
  filename: string;
  data: Buffer;
}

export interface MultipartForm {
  /** Plain fields, first value of each name. */
  fields: Record<string, string>;
  /** File parts among `fileFields`, first of each name (a plain field of that name counts as its bytes). */
  files: Record<string, MultipartFilePart>;
}

export interface MultipartFormOptions {
  /**
   * Runs once, when the first part of `fileFields` begins, with the plain fields read so far and
   * that part's file name; not a byte of the part is read before it resolves (busboy stops
   * reading the request meanwhile), and a rejection ends the request there, the rest of the body
   * unread (docs/security.md, "Bounded work for anonymous and unauthorised callers"). With it,
   * a plain field standing for a file part is held to 64 KiB like any field.
   */
  beforeFile?: (fields: Record<string, string>, file: { field: string; filename: string }) => Promise<void>;
}

/**
 * A small multipart form (a form definition upload, a form media file): plain fields (at most
 * 20, 64 KiB each) and the file parts named in `fileFields`, each buffered up to `maxFileBytes`;
 * other file parts are drained. Over a limit → 413 once the body has been read.
 */
export async function readMultipartForm(req: IncomingMessage, fileFields: readonly string[], maxFileBytes: number, options: MultipartFormOptions = {}): Promise<MultipartForm> {
  let bb: busboy.Busboy;
  const fieldSize = options.beforeFile ? 65_536 : Math.max(maxFileBytes, 65_536);
  try {
    bb = busboy({ headers: req.headers, limits: { fileSize: maxFileBytes, fieldSize, files: 5, fields: 20 } });
  } catch {
    throw new HttpErrorWithHeaders(415, 'Expected multipart/form-data with a boundary.', {});
  }
  const form: MultipartForm = { fields: {}, files: {} };
  let tooLarge: string | null = null;
  const parts: Array<Promise<void>> = [];
  // Rejects when beforeFile refuses: the request is then not read further.
  let refuse!: (err: unknown) => void;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined);
  let checked: Promise<void> | null = null;
  bb.on('field', (field, value, info) => {
    if (fileFields.includes(field)) {
      // Some clients send the document as a plain field (`xml_file=<h:html ...>`).
      if (info.valueTruncated) tooLarge ??= field;
      else form.files[field] ??= { filename: '', data: Buffer.from(value, 'utf8') };
      return;
    }
    if (info.valueTruncated || value.length > 65_536) tooLarge ??= field;
    else form.fields[field] ??= value;
  });
  // The first file part of any name waits for beforeFile; later ones for its outcome.
  const gate = (field: string, filename: string): Promise<void> | null => {
    if (!options.beforeFile) return null;
    if (!checked) {
      checked = options.beforeFile({ ...form.fields }, { field, filename });
      checked.catch(refuse);
    }
    return checked;
  };
  bb.on('file', (field, stream, info) => {
    // A truncated body fails the part stream as well as busboy; unheard, it would be uncaught.
    stream.on('error', () => undefined);
    const filename = basename((info.filename ?? '').replace(/\\/g, '/'));
    if (!fileFields.includes(field) || form.files[field]) {
      const g = gate(field, filename);
      if (g) g.then(() => stream.resume(), () => undefined);
      else stream.resume();
      return;
    }
    const chunks: Buffer[] = [];
    const read = () => {
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => (tooLarge ??= field));
    };
    parts.push(new Promise((resolve) => stream.on('close', () => {
      form.files[field] ??= { filename, data: Buffer.concat(chunks) };
      resolve();
    })));
    // Unread until beforeFile passes: no 'data' listener, so the part (and the request) waits.
    const g = gate(field, filename);
    if (g) g.then(read, () => undefined);
    else read();
  });
  try {
    await pipeUntilRefused(req, bb, refused);
    await Promise.race([refused, Promise.all(parts)]);
  } catch (err) {
    req.unpipe(bb);
    throw err;
  }
  if (tooLarge) throw new HttpErrorWithHeaders(413, `The "${tooLarge}" part is larger than ${fileFields.includes(tooLarge) ? maxFileBytes : 65_536} bytes.`, {});
  return form;
}

/**
 * Pipes `req` into busboy until busboy closes, or until `refused` rejects first (a caller refused
 * while the body is read): a malformed body or an aborted request is a 400.
 */
export function pipeUntilRefused(req: IncomingMessage, bb: busboy.Busboy, refused: Promise<never>): Promise<void> {
  return Promise.race([
    refused,
    new Promise<void>((resolve, reject) => {
      bb.on('close', resolve);
      bb.on('error', (err: Error) => reject(new HttpErrorWithHeaders(400, `Malformed multipart body: ${err.message}`, {})));
      req.on('error', () => reject(new HttpErrorWithHeaders(400, 'Request aborted.', {})));
      req.pipe(bb);
    }),
  ]);
}
