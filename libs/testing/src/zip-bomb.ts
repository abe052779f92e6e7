// A zip whose directory lies: each entry declares a small size but its deflate stream inflates
// to far more. Built by streaming zeros through a deflater, so only the compressed bytes (about a
// thousandth of the inflated size) are ever held.
import { crc32, createDeflateRaw, constants } from 'node:zlib';

export interface LyingZipEntry {
  name: string;
  /** What the entry really inflates to (zeros). */
  inflatedBytes: number;
  /** The size its central directory and local header declare. */
  declaredBytes: number;
}

async function deflateRepeated(chunk: Buffer, totalBytes: number): Promise<{ compressed: Buffer; crc: number }> {
  const deflater = createDeflateRaw({ level: constants.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  deflater.on('data', (b: Buffer) => out.push(b));
  const done = new Promise<void>((resolve, reject) => {
    deflater.on('end', resolve);
    deflater.on('error', reject);
  });
  let crc = 0;
  for (let left = totalBytes; left > 0; left -= chunk.length) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    crc = crc32(piece, crc);
    if (!deflater.write(piece)) await new Promise((r) => deflater.once('drain', r));
  }
  deflater.end();
  await done;
  return { compressed: Buffer.concat(out), crc };
}

/** Builds the zip (deflated entries whose declared sizes are `declaredBytes`). */
export async function lyingZip(entries: LyingZipEntry[]): Promise<Buffer> {
  const zeros = Buffer.alloc(1 << 20);
  const parts: Buffer[] = [];
  const dirs: Buffer[] = [];
  let at = 0;
  for (const e of entries) {
    const { compressed, crc } = await deflateRepeated(zeros, e.inflatedBytes);
    const name = Buffer.from(e.name);
    const header = (signature: number, size: number) => {
      const h = Buffer.alloc(size);
      h.writeUInt32LE(signature, 0);
      return h;
    };
    // The fields both headers carry, from `base` on: the local header's at 4, the central
    // directory's at 6 (after its "version made by").
    const entryFields = (h: Buffer, base: number) => {
      h.writeUInt16LE(20, base); // version needed
      h.writeUInt16LE(8, base + 4); // deflate
      h.writeUInt32LE(crc, base + 10);
      h.writeUInt32LE(compressed.length, base + 14);
      h.writeUInt32LE(e.declaredBytes, base + 18); // the lie
      h.writeUInt16LE(name.length, base + 22);
    };
    const local = header(0x04034b50, 30);
    entryFields(local, 4);
    const dir = header(0x02014b50, 46);
    dir.writeUInt16LE(20, 4);
    entryFields(dir, 6);
    dir.writeUInt32LE(at, 42);
    parts.push(local, name, compressed);
    dirs.push(dir, name);
    at += local.length + name.length + compressed.length;
  }
  const dirSize = dirs.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirSize, 12);
  end.writeUInt32LE(at, 16);
  return Buffer.concat([...parts, ...dirs, end]);
}
