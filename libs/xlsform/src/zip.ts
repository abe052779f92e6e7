// Unpacks an .xlsx (a zip) with a hard cap on the bytes inflated, whatever sizes its directory
// declares (docs/xlsform.md, "Limits").
import { inflateRaw } from 'node:zlib';
import { promisify } from 'node:util';
import { XlsFormReadError } from './errors.js';

const inflateRawCapped = promisify(inflateRaw) as (buf: Uint8Array, options: { maxOutputLength: number }) => Promise<Buffer>;

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
const FLAG_ENCRYPTED = 0x1;

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
  const { view, entries, offset: start } = findDirectory(buf);
  let offset = start;
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
 * returns the entries by name, lowercased (names in a package are case-insensitive). Throws
 * XlsFormReadError.
 */
export async function unpackZipCapped(buf: Uint8Array, maxBytes: number): Promise<Map<string, Buffer>> {
  const { view, entries: count, offset: start } = findDirectory(buf);
  let offset = start;
  const entries = new Map<string, Buffer>();
  let produced = 0;
  for (let i = 0; i < count; i++) {
    if (offset + 46 > buf.length || view.getUint32(offset, true) !== CENTRAL) throw notWorkbook('broken zip directory');
    const flags = view.getUint16(offset + 8, true);
    const method = view.getUint16(offset + 10, true);
    const compressedSize = view.getUint32(offset + 20, true);
    const nameLength = view.getUint16(offset + 28, true);
    const localOffset = view.getUint32(offset + 42, true);
    const name = Buffer.from(buf.buffer, buf.byteOffset + offset + 46, nameLength).toString('utf8');
    offset += 46 + nameLength + view.getUint16(offset + 30, true) + view.getUint16(offset + 32, true);
    if (flags & FLAG_ENCRYPTED) throw notWorkbook('an entry is encrypted');
    if (localOffset + 30 > buf.length || view.getUint32(localOffset, true) !== LOCAL) throw notWorkbook('broken zip entry');
    const start = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
    // The compressed size is bounded by the file itself; a deflate stream ends by its own marker.
    const raw = buf.subarray(start, Math.min(buf.length, start + compressedSize));
    const left = maxBytes - produced;
    let data: Buffer;
    if (method === STORED) {
      data = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
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
    if (!name.endsWith('/')) entries.set(name.replace(/^\//, '').toLowerCase(), data);
  }
  return entries;
}
