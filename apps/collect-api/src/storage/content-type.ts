import mime from 'mime-types';
import { isActiveContentType } from './served-content.js';

/**
 * The mimetype of an uploaded file from its first bytes, with the file name as tie-breaker
 * (an `ftyp` box is audio or video depending on the name). The client's declared content type
 * is never trusted: media downloads must not serve a file as text/html because a client said so.
 */
export function detectMimetype(head: Buffer, filename: string): string {
  const byName = (mime.lookup(filename) || '') as string;
  const family = byName.split('/')[0];
  const ascii = (start: number, end: number) => head.subarray(start, end).toString('latin1');
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'image/png';
  if (ascii(0, 4) === 'GIF8') return 'image/gif';
  if (ascii(0, 4) === 'RIFF') {
    const kind = ascii(8, 12);
    if (kind === 'WEBP') return 'image/webp';
    if (kind === 'WAVE') return 'audio/wav';
    if (kind === 'AVI ') return 'video/x-msvideo';
  }
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (brand.startsWith('M4A') || family === 'audio') return 'audio/mp4';
    if (brand.startsWith('3gp')) return 'video/3gpp';
    if (brand === 'qt  ') return 'video/quicktime';
    if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic';
    return 'video/mp4';
  }
  if (ascii(0, 4) === 'OggS') return family === 'video' ? 'video/ogg' : 'audio/ogg';
  if (ascii(0, 3) === 'ID3' || (head[0] === 0xff && (head[1] & 0xe0) === 0xe0)) return 'audio/mpeg';
  if (ascii(0, 5) === '#!AMR') return 'audio/amr';
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return family === 'audio' ? 'audio/webm' : 'video/webm';
  if (ascii(0, 5) === '%PDF-') return 'application/pdf';
  // A zip container (docx, xlsx, odt, zip): the name picks among them, never an active type
  // (`x.html`, `x.svg` that start with PK are still a zip to us).
  if (ascii(0, 4) === 'PK\x03\x04') return byName && !isActiveContentType(byName) ? byName : 'application/zip';
  // Text-like or unknown content: trust the name only for harmless families.
  if (byName && !isActiveContentType(byName)) return byName;
  return 'application/octet-stream';
}
