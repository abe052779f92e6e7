import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { HttpErrorWithHeaders } from '@collect/contracts';
import { detectMimetype } from '../storage/content-type.js';

export interface UploadedFile {
  field: string;
  /** The client's file name (the value a media question holds), reduced to a base name. */
  name: string;
  tmpPath: string;
  size: number;
  mimetype: string;
}

export interface MultipartSubmission {
  xml: string | null;
  files: UploadedFile[];
  /** Removes the temporary files; always call it (finally). */
  cleanup(): Promise<void>;
}

export interface MultipartLimits {
  attachmentMaxBytes: number;
  xmlMaxBytes: number;
  maxFiles: number;
  /** Where attachment parts are spooled until stored (UPLOAD_TMP_DIR). */
  tmpDir: string;
}

export const XML_PART = 'xml_submission_file';
/** attachments.name is varchar(255): a longer name is refused, not a database error (found by fuzzing). */
export const MAX_ATTACHMENT_NAME = 255;

export function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '');
}

/**
 * Reads an OpenRosa multipart body: the `xml_submission_file` part into memory (bounded by
 * xmlMaxBytes), every other file part streamed to a temporary file (bounded by
 * attachmentMaxBytes), its mimetype sniffed from the first bytes. Over a limit → 413 once the
 * body has been read, with every temporary file removed.
 */
export async function readMultipartSubmission(req: IncomingMessage, limits: MultipartLimits): Promise<MultipartSubmission> {
  await mkdir(limits.tmpDir, { recursive: true });
  const files: UploadedFile[] = [];
  const temps: string[] = [];
  const cleanup = async () => {
    await Promise.all(temps.map((t) => rm(t, { force: true })));
  };
  let xml: string | null = null;
  let failure: HttpErrorWithHeaders | null = null;
  const fail = (status: number, detail: string) => (failure ??= new HttpErrorWithHeaders(status, detail, {}));

  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      limits: { fileSize: Math.max(limits.attachmentMaxBytes, limits.xmlMaxBytes), files: limits.maxFiles + 1, fields: 100, fieldSize: limits.xmlMaxBytes },
    });
  } catch {
    throw new HttpErrorWithHeaders(415, 'Expected multipart/form-data with a boundary.', {});
  }

  const writes: Array<Promise<void>> = [];
  const outs: Array<Promise<void>> = [];
  const destroyers: Array<() => void> = [];
  bb.on('field', (name, value, info) => {
    if (name === XML_PART) {
      if (info.valueTruncated) fail(413, 'The submission XML is too large.');
      else xml = value;
    }
  });
  bb.on('file', (field, stream, info) => {
    // A truncated body fails the part stream too ("Unexpected end of form"); without a listener
    // that error is uncaught and takes the process down (found by fuzzing).
    stream.on('error', (err: Error) => fail(400, `Malformed multipart body: ${err.message}`));
    if (field === XML_PART) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size > limits.xmlMaxBytes) fail(413, 'The submission XML is too large.');
        else chunks.push(c);
      });
      // busboy stops at fileSize (the larger of the two limits) and says so with 'limit': when
      // that equals xmlMaxBytes the byte count never exceeds it, and a truncated document used
      // to be parsed and stored (found by the hardening limits test).
      stream.on('limit', () => fail(413, 'The submission XML is too large.'));
      writes.push(new Promise((resolve) => stream.on('close', () => {
        if (!failure) xml = Buffer.concat(chunks).toString('utf8');
        resolve();
      })));
      return;
    }
    const name = basename((info.filename ?? '').replace(/\\/g, '/')) || `${field || 'file'}.bin`;
    if (name.length > MAX_ATTACHMENT_NAME) fail(400, `An attachment name is longer than ${MAX_ATTACHMENT_NAME} characters.`);
    const tmpPath = join(limits.tmpDir, `${randomUUID()}.part`);
    temps.push(tmpPath);
    let size = 0;
    let head = Buffer.alloc(0);
    const out = createWriteStream(tmpPath);
    outs.push(new Promise<void>((resolve) => out.on('close', () => resolve())).then(() => undefined));
    destroyers.push(() => out.destroy());
    // Keep part order (the order the client sent), whatever order the writes finish in.
    const slot = files.length;
    files.push(undefined as unknown as UploadedFile);
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (head.length < 16) head = Buffer.concat([head, c.subarray(0, 16 - head.length)]);
      if (size > limits.attachmentMaxBytes) fail(413, `The attachment "${name}" is larger than ${limits.attachmentMaxBytes} bytes.`);
    });
    stream.on('limit', () => fail(413, `The attachment "${name}" is larger than ${limits.attachmentMaxBytes} bytes.`));
    // pipe() does not end the file when the part fails: close it so its descriptor is released.
    stream.on('error', () => out.destroy());
    writes.push(
      new Promise((resolve) => {
        stream.pipe(out);
        out.on('close', () => {
          files[slot] = { field, name, tmpPath, size, mimetype: detectMimetype(head, name) };
          resolve();
        });
        out.on('error', () => {
          fail(500, 'Could not store the upload.');
          resolve();
        });
      }),
    );
  });
  bb.on('filesLimit', () => fail(413, `At most ${limits.maxFiles} attachments per submission.`));

  try {
    await new Promise<void>((resolve, reject) => {
      bb.on('close', resolve);
      bb.on('error', (err: Error) => reject(new HttpErrorWithHeaders(400, `Malformed multipart body: ${err.message}`, {})));
      req.on('error', () => reject(new HttpErrorWithHeaders(400, 'Request aborted.', {})));
      req.pipe(bb);
    });
    await Promise.all(writes);
  } catch (err) {
    // A temporary file still opening would be created after its removal: close every one
    // first (.part files were found left behind after early fuzzing runs).
    // Only the file streams: a part stream busboy gave up on may never close (fuzzing found a
    // hang when this awaited every part).
    for (const destroy of destroyers) destroy();
    await Promise.all(outs);
    await cleanup();
    throw err;
  }
  if (failure) {
    await cleanup();
    throw failure;
  }
  return { xml, files, cleanup };
}
