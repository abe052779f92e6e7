// Unpacks an .xlsx (a zip) with a hard cap on the bytes inflated, whatever sizes its directory
// declares, and hands the spreadsheet reader a copy whose entries are stored uncompressed: the
// reader then inflates nothing itself (docs/xlsform.md, "Limits").
import { crc32, inflateRaw } from 'node:zlib';
import { promisify } from 'node:util';
import { XlsFormReadError } from './errors.js';

const inflateRawCapped = promisify(inflateRaw) as (buf: Uint8Array, options: { maxOutputLength: number }) => Promise<Buffer>;

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;

interface Entry {
  name: Uint8Array;
  flags: number;
  data: Uint8Array | null;
}

function notWorkbook(why: string): XlsFormReadError {
  return new XlsFormReadError(`The file is not an .xlsx workbook (${why}).`);
}

function overLimit(limit: number): XlsFormReadError {
  return new XlsFormReadError(`The workbook unpacks to more than ${limit} bytes; the limit is ${limit}.`);
}

interface Directory {
  view: DataView;
  entries: number;
  offset: number;
}

function findDirectory(buf: Uint8Array): Directory {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const minEocd = 22;
  for (let i = buf.length - minEocd; i >= Math.max(0, buf.length - minEocd - 0xffff); i--) {
    if (view.getUint32(i, true) === EOCD) return { view, entries: view.getUint16(i + 10, true), offset: view.getUint32(i + 16, true) };
  }
  throw notWorkbook('no zip directory found');
}

/** The sum of the uncompressed sizes the zip's central directory declares (a cheap first refusal; the inflate cap is what holds). */
export function uncompressedZipSize(buf: Uint8Array): number {
  const { view, entries } = findDirectory(buf);
  let { offset } = findDirectory(buf);
  let total = 0;
  for (let i = 0; i < entries; i++) {
    if (offset + 46 > buf.length || view.getUint32(offset, true) !== CENTRAL) throw notWorkbook('broken zip directory');
    total += view.getUint32(offset + 24, true);
    offset += 46 + view.getUint16(offset + 28, true) + view.getUint16(offset + 30, true) + view.getUint16(offset + 32, true);
  }
  return total;
}

/**
 * Inflates every entry of the zip, stopping as soon as the bytes produced pass `maxBytes` in
 * total (each entry is inflated with node:zlib's `maxOutputLength` set to what is left), and
 * returns the same entries as a zip of stored entries, each passed through `transform` when
 * given. Throws XlsFormReadError.
 */
export async function unpackZipCapped(buf: Uint8Array, maxBytes: number, transform?: (name: string, data: Uint8Array) => Uint8Array): Promise<Buffer> {
  const { view, entries: count } = findDirectory(buf);
  let { offset } = findDirectory(buf);
  const entries: Entry[] = [];
  let produced = 0;
  for (let i = 0; i < count; i++) {
    if (offset + 46 > buf.length || view.getUint32(offset, true) !== CENTRAL) throw notWorkbook('broken zip directory');
    const flags = view.getUint16(offset + 8, true);
    const method = view.getUint16(offset + 10, true);
    const compressedSize = view.getUint32(offset + 20, true);
    const nameLength = view.getUint16(offset + 28, true);
    const localOffset = view.getUint32(offset + 42, true);
    const name = buf.subarray(offset + 46, offset + 46 + nameLength);
    offset += 46 + nameLength + view.getUint16(offset + 30, true) + view.getUint16(offset + 32, true);
    if (flags & FLAG_ENCRYPTED) throw notWorkbook('an entry is encrypted');
    if (localOffset + 30 > buf.length || view.getUint32(localOffset, true) !== LOCAL) throw notWorkbook('broken zip entry');
    const start = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
    // The compressed size is bounded by the file itself; a deflate stream ends by its own marker.
    const raw = buf.subarray(start, Math.min(buf.length, start + compressedSize));
    const left = maxBytes - produced;
    let data: Uint8Array;
    if (method === STORED) {
      data = raw;
    } else if (method === DEFLATED) {
      try {
        data = await inflateRawCapped(raw, { maxOutputLength: Math.max(1, left + 1) });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw overLimit(maxBytes);
        throw notWorkbook(`an entry does not inflate: ${(err as Error).message}`);
      }
    } else {
      throw notWorkbook(`an entry uses compression method ${method}`);
    }
    if (data.length > left) throw overLimit(maxBytes);
    produced += data.length;
    if (transform) data = transform(Buffer.from(name).toString('utf8'), data);
    entries.push({ name, flags, data });
  }
  return storedZip(entries);
}

/** A zip of stored (uncompressed) entries, written into one buffer; each inflated entry is let go once copied. */
function storedZip(entries: Entry[]): Buffer {
  const size = entries.reduce((n, e) => n + 30 + 46 + 2 * e.name.length + (e.data?.length ?? 0), 22);
  const out = Buffer.alloc(size);
  const dirs: Array<{ e: Entry; crc: number; length: number; at: number }> = [];
  let at = 0;
  for (const e of entries) {
    const data = e.data ?? new Uint8Array(0);
    const crc = crc32(data);
    out.writeUInt32LE(LOCAL, at);
    out.writeUInt16LE(20, at + 4);
    out.writeUInt16LE(e.flags & FLAG_UTF8, at + 6);
    out.writeUInt16LE(STORED, at + 8);
    out.writeUInt32LE(crc, at + 14);
    out.writeUInt32LE(data.length, at + 18);
    out.writeUInt32LE(data.length, at + 22);
    out.writeUInt16LE(e.name.length, at + 26);
    out.set(e.name, at + 30);
    out.set(data, at + 30 + e.name.length);
    dirs.push({ e, crc, length: data.length, at });
    at += 30 + e.name.length + data.length;
    e.data = null;
  }
  const dirStart = at;
  for (const { e, crc, length, at: localAt } of dirs) {
    out.writeUInt32LE(CENTRAL, at);
    out.writeUInt16LE(20, at + 4);
    out.writeUInt16LE(20, at + 6);
    out.writeUInt16LE(e.flags & FLAG_UTF8, at + 8);
    out.writeUInt16LE(STORED, at + 10);
    out.writeUInt32LE(crc, at + 16);
    out.writeUInt32LE(length, at + 20);
    out.writeUInt32LE(length, at + 24);
    out.writeUInt16LE(e.name.length, at + 28);
    out.writeUInt32LE(localAt, at + 42);
    out.set(e.name, at + 46);
    at += 46 + e.name.length;
  }
  out.writeUInt32LE(EOCD, at);
  out.writeUInt16LE(entries.length, at + 8);
  out.writeUInt16LE(entries.length, at + 10);
  out.writeUInt32LE(at - dirStart, at + 12);
  out.writeUInt32LE(dirStart, at + 16);
  return out;
}
