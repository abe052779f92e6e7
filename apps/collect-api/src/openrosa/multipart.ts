import { randomUUID } from 'node:crypto';
import { createWriteStream, open } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { basename, join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { FieldValidationError, HttpErrorWithHeaders } from '@collect/contracts';
import { detectMimetype } from '../storage/content-type.js';
import { pipeUntilRefused } from './body.js';

export interface UploadedFile {
  field: string;
  /** The client's file name (the value a media question holds), reduced to a base name. */
  name: string;
  /** The temporary file the part was spooled to; '' when it is held in memory (`bytes`). */
  tmpPath: string;
  /** The part's bytes, when the request was small enough to hold them (IN_MEMORY_REQUEST_BYTES). */
  bytes?: Buffer[];
  size: number;
  mimetype: string;
  /** Set once storage took the temporary file over (FileStorage.moveFile): cleanup leaves it be. */
  taken?: boolean;
}

export interface MultipartSubmission<T> {
  xml: string;
  files: UploadedFile[];
  /** What `authorize` answered for the XML part. */
  authorized: T;
  /** Removes the temporary files and drops the parts held in memory (`bytes`); always call it (finally), once they are stored. */
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
/** How many first bytes of a part detectMimetype reads. */
const SNIFF_BYTES = 16;

const openFile = promisify(open);

/**
 * A request whose whole body (Content-Length) is at most this many bytes keeps its attachment
 * parts in memory instead of spooling them to temporary files, as Django keeps uploads under
 * FILE_UPLOAD_MAX_MEMORY_SIZE: each is then written once, straight to its storage path (one
 * open, one write, one close), where a spooled part costs a temporary file's create, its writes
 * and a rename (docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place"). Bounded twice:
 * by the body's length per request and by IN_MEMORY_TOTAL_BYTES over the process; a request
 * past either spools to disk as before.
 */
export const IN_MEMORY_REQUEST_BYTES = 1024 * 1024;
export const IN_MEMORY_TOTAL_BYTES = 32 * 1024 * 1024;
let inMemoryTotal = 0;

/** Temporary folders known to exist (UPLOAD_TMP_DIR: in practice one). */
const readyDirs = new Set<string>();

/**
 * A new temporary file in `dir`, opened for writing. The folder is made once per process, not per
 * request (a `mkdir` per submission was a tenth of the OpenRosa path's file-system calls:
 * docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place"); removed meanwhile, it is made again.
 */
async function openTemp(dir: string, path: string): Promise<number> {
  // Known from an earlier request: when it is gone, it is made again once. Made just now and
  // still missing: an error, not another attempt (no loop).
  const known = readyDirs.has(dir);
  if (!known) {
    await mkdir(dir, { recursive: true });
    readyDirs.add(dir);
  }
  try {
    // A plain descriptor for fs.WriteStream, as createWriteStream(path) would open it (a FileHandle's
    // stream writes through fs/promises: more calls per chunk).
    return await openFile(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !known) throw err;
    readyDirs.delete(dir);
    return openTemp(dir, path);
  }
}

/**
 * The first SNIFF_BYTES of a part held as chunks, copied alone: concatenating the chunks first
 * copied the whole part (100 KB for a photo) into a new buffer for those bytes, and every such
 * buffer counts towards V8's old-generation limit until a collection (
 * docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place").
 */
export function headOf(chunks: readonly Buffer[]): Buffer {
  const head = Buffer.alloc(Math.min(SNIFF_BYTES, chunks.reduce((n, c) => n + Math.min(c.length, SNIFF_BYTES), 0)));
  let at = 0;
  for (const c of chunks) {
    if (at === head.length) break;
    at += c.copy(head, at, 0, Math.min(c.length, head.length - at));
  }
  return head;
}

export function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '');
}

/**
 * Reads an OpenRosa multipart body: the `xml_submission_file` part into memory (bounded by
 * xmlMaxBytes), then `authorize(xml)` (parse, find the form, check the caller's role), and only
 * when that passes every attachment part streamed to a temporary file (bounded by
 * attachmentMaxBytes), its mimetype sniffed from the first bytes. So a caller who may not
 * submit never makes the server write an attachment: the XML must come first (ODK Collect and
 * Enketo send it first), an attachment before it is a 400, and a refused XML ends the request
 * at once, before the rest of the body is read. Over a size limit → 413 once the body has been
 * read, with every temporary file removed.
 */
export async function readMultipartSubmission<T>(req: IncomingMessage, limits: MultipartLimits, authorize: (xml: string) => Promise<T>): Promise<MultipartSubmission<T>> {
  const files: UploadedFile[] = [];
  const temps: string[] = [];
  let held = 0;
  // Temporary files, never folders: unlink is enough (rm would lstat each first). A file storage
  // took over is gone already: no call for it.
  const cleanup = async () => {
    inMemoryTotal -= held;
    held = 0;
    // The parts held in memory are stored by now: let go of their chunks. They are views of the
    // socket's 64 KB read buffers, and the request's objects can outlive young-generation
    // collections (a retainer outside this function); a chunk array still reachable from them
    // kept ~100 KB of external memory per submission until a major collection
    // (docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place").
    for (const f of files) {
      if (f?.bytes) {
        f.bytes.length = 0;
        f.bytes = undefined;
      }
    }
    const taken = new Set(files.filter((f) => f?.taken).map((f) => f.tmpPath));
    await Promise.all(temps.filter((t) => !taken.has(t)).map((t) => unlink(t).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    })));
  };
  let failure: HttpErrorWithHeaders | null = null;
  const fail = (status: number, detail: string) => (failure ??= new HttpErrorWithHeaders(status, detail, {}));

  // The XML part, once complete, and what `authorize` made of it; attachment parts wait for it.
  let xml: string | null = null;
  let authorization: Promise<T> | null = null;
  let acceptXml!: (outcome: Promise<T>) => void;
  let rejectXml!: (err: unknown) => void;
  const xmlAccepted = new Promise<T>((resolve, reject) => {
    acceptXml = resolve;
    rejectXml = reject;
  });
  xmlAccepted.catch(() => undefined);
  // Rejects as soon as the request is refused before its end (the rest is then not read).
  let refuse!: (err: unknown) => void;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined);
  let xmlStarted = false;
  const xmlDone = (text: string | null) => {
    if (authorization || xml !== null) return; // a second XML part is ignored, as before
    if (text === null) return rejectXml(failure);
    xml = text;
    authorization = authorize(text);
    authorization.catch((err: unknown) => refuse(err));
    acceptXml(authorization);
  };

  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      limits: { fileSize: Math.max(limits.attachmentMaxBytes, limits.xmlMaxBytes), files: limits.maxFiles + 1, fields: 100, fieldSize: limits.xmlMaxBytes },
    });
  } catch {
    throw new HttpErrorWithHeaders(415, 'Expected multipart/form-data with a boundary.', {});
  }

  // Attachments held in memory (IN_MEMORY_REQUEST_BYTES): the body's declared length is
  // reserved from the process budget until cleanup (Node's parser never reads past it).
  const declared = Number(req.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared > 0 && declared <= IN_MEMORY_REQUEST_BYTES && inMemoryTotal + declared <= IN_MEMORY_TOTAL_BYTES) held = declared;
  inMemoryTotal += held;

  const writes: Array<Promise<void>> = [];
  const outs: Array<Promise<void>> = [];
  const destroyers: Array<() => void> = [];
  /** Temporary files being opened: an early refusal waits for them, or they would be created after the cleanup. */
  const openings: Array<Promise<unknown>> = [];
  let aborted = false;
  bb.on('field', (name, value, info) => {
    if (name !== XML_PART) return;
    xmlStarted = true;
    if (info.valueTruncated) fail(413, 'The submission XML is too large.');
    xmlDone(info.valueTruncated ? null : value);
  });
  bb.on('file', (field, stream, info) => {
    // A truncated body fails the part stream too ("Unexpected end of form"); without a listener
    // that error is uncaught and takes the process down (found by fuzzing).
    stream.on('error', (err: Error) => fail(400, `Malformed multipart body: ${err.message}`));
    if (field === XML_PART) {
      xmlStarted = true;
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
        xmlDone(failure ? null : Buffer.concat(chunks).toString('utf8'));
        // Views of the same socket buffers as the photo's first bytes (see cleanup).
        chunks.length = 0;
        resolve();
      })));
      return;
    }
    if (!xmlStarted) {
      // Nothing is known yet about who may submit what: refused rather than spooled.
      refuse(new FieldValidationError({ [XML_PART]: ['The xml_submission_file part must come before the attachments.'] }));
      stream.resume();
      return;
    }
    const name = basename((info.filename ?? '').replace(/\\/g, '/')) || `${field || 'file'}.bin`;
    if (name.length > MAX_ATTACHMENT_NAME) fail(400, `An attachment name is longer than ${MAX_ATTACHMENT_NAME} characters.`);
    // Keep part order (the order the client sent), whatever order the writes finish in.
    const slot = files.length;
    files.push(undefined as unknown as UploadedFile);
    if (held) {
      // Not read before the XML was accepted, as a spooled part (backpressure meanwhile).
      writes.push(xmlAccepted.then(() => keep(field, name, stream, slot), () => void stream.resume()));
      return;
    }
    // Not read before the XML was accepted: busboy meanwhile stops reading the request (backpressure).
    writes.push(xmlAccepted.then(() => spool(field, name, stream, slot), () => void stream.resume()));
  });
  bb.on('filesLimit', () => fail(413, `At most ${limits.maxFiles} attachments per submission.`));

  /** An attachment part held in memory (the request is small: IN_MEMORY_REQUEST_BYTES). */
  const keep = (field: string, name: string, stream: Readable, slot: number): Promise<void> => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limits.attachmentMaxBytes) fail(413, `The attachment "${name}" is larger than ${limits.attachmentMaxBytes} bytes.`);
      else chunks.push(c);
    });
    stream.on('limit', () => fail(413, `The attachment "${name}" is larger than ${limits.attachmentMaxBytes} bytes.`));
    return new Promise((resolve) => stream.on('close', () => {
      files[slot] = { field, name, tmpPath: '', bytes: chunks, size, mimetype: detectMimetype(headOf(chunks), name) };
      resolve();
    }));
  };

  const spool = async (field: string, name: string, stream: Readable, slot: number): Promise<void> => {
    const tmpPath = join(limits.tmpDir, `${randomUUID()}.part`);
    temps.push(tmpPath);
    let size = 0;
    let head = Buffer.alloc(0);
    // Refused meanwhile: no file is made after the cleanup.
    if (aborted) return void stream.resume();
    // The part is not read until its file is open (busboy meanwhile holds the request back).
    let fd: number;
    try {
      const opening = openTemp(limits.tmpDir, tmpPath);
      openings.push(opening.catch(() => undefined));
      fd = await opening;
    } catch {
      fail(500, 'Could not store the upload.');
      stream.resume();
      return;
    }
    const out = createWriteStream(tmpPath, { fd });
    outs.push(new Promise<void>((resolve) => out.on('close', () => resolve())));
    destroyers.push(() => out.destroy());
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, c.subarray(0, SNIFF_BYTES - head.length)]);
      if (size > limits.attachmentMaxBytes) fail(413, `The attachment "${name}" is larger than ${limits.attachmentMaxBytes} bytes.`);
    });
    stream.on('limit', () => fail(413, `The attachment "${name}" is larger than ${limits.attachmentMaxBytes} bytes.`));
    // pipe() does not end the file when the part fails: close it so its descriptor is released.
    stream.on('error', () => out.destroy());
    return new Promise((resolve) => {
      stream.pipe(out);
      out.on('close', () => {
        files[slot] = { field, name, tmpPath, size, mimetype: detectMimetype(head, name) };
        resolve();
      });
      out.on('error', () => {
        fail(500, 'Could not store the upload.');
        resolve();
      });
    });
  };

  try {
    await pipeUntilRefused(req, bb, refused);
    await Promise.race([refused, Promise.all(writes)]);
  } catch (err) {
    // Refused early: read no more of the request. A temporary file still opening would be
    // created after its removal: close every one first (.part files were found left behind
    // after early fuzzing runs). Only the file streams: a part stream busboy gave up on may
    // never close (fuzzing found a hang when this awaited every part).
    req.unpipe(bb);
    aborted = true;
    await Promise.all(openings);
    for (const destroy of destroyers) destroy();
    await Promise.all(outs);
    await cleanup();
    throw err;
  }
  if (failure || !authorization) {
    await cleanup();
    throw failure ?? new FieldValidationError({ [XML_PART]: ['This part is required.'] });
  }
  try {
    return { xml: xml!, files, authorized: await authorization, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
