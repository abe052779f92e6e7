import sharp from 'sharp';

/** Real media files for the demo seed, generated in-process (no binaries in the repo). */

export async function demoJpeg(seed: number, width = 800, height = 600): Promise<Buffer> {
  const hue = (seed * 67) % 360;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="hsl(${hue},60%,55%)"/>
    <circle cx="${width / 2}" cy="${height / 2}" r="${Math.min(width, height) / 3}" fill="hsl(${(hue + 180) % 360},70%,45%)"/>
    <text x="40" y="80" font-size="56" font-family="sans-serif" fill="white">demo ${seed}</text></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 80 }).toBuffer();
}

/** A mono 8 kHz 16-bit PCM WAV tone of `seconds`. */
export function demoWav(seed: number, seconds = 1): Buffer {
  const rate = 8000;
  const samples = Math.round(rate * seconds);
  const data = Buffer.alloc(samples * 2);
  const freq = 330 + seed * 110;
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * freq * i) / rate) * 6000), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

function chunk(id: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  const pad = body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0);
  return Buffer.concat([head, body, pad]);
}

function list(type: string, ...parts: Buffer[]): Buffer {
  return chunk('LIST', Buffer.concat([Buffer.from(type, 'latin1'), ...parts]));
}

/** A short Motion-JPEG AVI (video/x-msvideo): `frames` frames at 5 fps, 160×120. */
export async function demoAvi(seed: number, frames = 10): Promise<Buffer> {
  const w = 160;
  const h = 120;
  const fps = 5;
  const jpegs = await Promise.all(Array.from({ length: frames }, (_, i) => demoJpeg(seed * 100 + i, w, h)));
  const maxFrame = Math.max(...jpegs.map((j) => j.length));
  const avih = Buffer.alloc(56);
  avih.writeUInt32LE(Math.round(1_000_000 / fps), 0); // microseconds per frame
  avih.writeUInt32LE(maxFrame * fps, 4);
  avih.writeUInt32LE(0x10, 12); // AVIF_HASINDEX
  avih.writeUInt32LE(frames, 16);
  avih.writeUInt32LE(1, 24); // streams
  avih.writeUInt32LE(maxFrame, 28);
  avih.writeUInt32LE(w, 32);
  avih.writeUInt32LE(h, 36);
  const strh = Buffer.alloc(56);
  strh.write('vids', 0, 'latin1');
  strh.write('MJPG', 4, 'latin1');
  strh.writeUInt32LE(1, 20); // scale
  strh.writeUInt32LE(fps, 24); // rate
  strh.writeUInt32LE(frames, 32); // length
  strh.writeUInt32LE(maxFrame, 36);
  strh.writeInt32LE(-1, 40); // quality
  strh.writeUInt16LE(w, 52);
  strh.writeUInt16LE(h, 54);
  const strf = Buffer.alloc(40); // BITMAPINFOHEADER
  strf.writeUInt32LE(40, 0);
  strf.writeInt32LE(w, 4);
  strf.writeInt32LE(h, 8);
  strf.writeUInt16LE(1, 12);
  strf.writeUInt16LE(24, 14);
  strf.write('MJPG', 16, 'latin1');
  strf.writeUInt32LE(w * h * 3, 20);
  const hdrl = list('hdrl', chunk('avih', avih), list('strl', chunk('strh', strh), chunk('strf', strf)));
  const frameChunks = jpegs.map((j) => chunk('00dc', j));
  const movi = list('movi', ...frameChunks);
  const idx = Buffer.alloc(16 * frames);
  let offset = 4; // relative to the 'movi' fourcc
  frameChunks.forEach((c, i) => {
    idx.write('00dc', i * 16, 'latin1');
    idx.writeUInt32LE(0x10, i * 16 + 4); // AVIIF_KEYFRAME
    idx.writeUInt32LE(offset, i * 16 + 8);
    idx.writeUInt32LE(jpegs[i].length, i * 16 + 12);
    offset += c.length;
  });
  const body = Buffer.concat([Buffer.from('AVI ', 'latin1'), hdrl, movi, chunk('idx1', idx)]);
  return chunk('RIFF', body);
}
