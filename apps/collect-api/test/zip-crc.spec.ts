import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';

/**
 * The archives' CRC-32 comes from Node's zlib through a patch of yazl's `buffer-crc32`
 * (docs/media.md, "Media archives"). yauzl, which the other archive tests read with, does not
 * check CRCs, so a wrong one would pass them: checked here against a bitwise CRC-32 written from
 * its definition and the standard check value.
 */
function bitwiseCrc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** The CRC-32 yazl wrote for each entry, from the archive's central directory. */
async function centralCrcs(zip: Buffer): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await new Promise<void>((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, z) => {
      if (err || !z) return reject(err);
      z.on('entry', (e: yauzl.Entry) => {
        out.set(e.fileName, e.crc32);
        z.readEntry();
      });
      z.on('end', () => resolve());
      z.on('error', reject);
      z.readEntry();
    });
  });
  return out;
}

async function archive(entries: Array<[name: string, chunks: Buffer[]]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, chunks] of entries) zip.addReadStream(Readable.from(chunks), name, { compress: false });
  zip.end();
  const parts: Buffer[] = [];
  for await (const chunk of zip.outputStream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

describe('ZIP entries carry the standard CRC-32', () => {
  it('the check value, an empty file, and random files streamed in uneven chunks', async () => {
    const big = randomBytes(300_001);
    const cuts = [0, 1, 65_536, 65_537, 200_000, big.length];
    const chunks = cuts.slice(1).map((end, i) => big.subarray(cuts[i], end));
    const small = randomBytes(777);
    const crcs = await centralCrcs(await archive([['check.txt', [Buffer.from('123456789')]], ['empty', []], ['big.bin', chunks], ['small.bin', [small.subarray(0, 3), small.subarray(3)]]]));
    expect(crcs.get('check.txt')).toBe(0xcbf43926);
    expect(crcs.get('empty')).toBe(0);
    expect(crcs.get('big.bin')).toBe(bitwiseCrc32(big));
    expect(crcs.get('small.bin')).toBe(bitwiseCrc32(small));
  });

  it('buffer-crc32 as yazl loads it keeps its API: signed, unsigned, a Buffer, and a running value', () => {
    const crc32 = createRequire(createRequire(import.meta.url).resolve('yazl'))('buffer-crc32') as {
      (b: Buffer, previous?: Buffer | number): Buffer;
      signed(b: Buffer, previous?: number): number;
      unsigned(b: Buffer, previous?: number): number;
    };
    const data = randomBytes(4097);
    const expected = bitwiseCrc32(data);
    expect(crc32.unsigned(data)).toBe(expected);
    expect(crc32.signed(data)).toBe(expected | 0);
    expect(crc32(data).readUInt32BE(0)).toBe(expected);
    const head = data.subarray(0, 1000);
    expect(crc32.unsigned(data.subarray(1000), crc32.unsigned(head))).toBe(expected);
    expect(crc32.unsigned(data.subarray(1000), crc32.signed(head))).toBe(expected);
    expect(crc32(data.subarray(1000), crc32(head)).readUInt32BE(0)).toBe(expected);
    expect(crc32.unsigned(Buffer.alloc(0), 12345)).toBe(12345);
  });
});
