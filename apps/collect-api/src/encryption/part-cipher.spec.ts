import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { DecryptionFailureError } from './decryption-failure.js';
import { cfbDecrypt, decryptPart, PartDecipher } from './part-cipher.js';

/** AES-256-CFB as OpenSSL does it: what cfbDecrypt must equal. */
function reference(key: Buffer, iv: Buffer, ciphertext: Buffer): Buffer {
  const d = createDecipheriv('aes-256-cfb', key, iv);
  return Buffer.concat([d.update(ciphertext), d.final()]);
}

describe('cfbDecrypt', () => {
  it('equals aes-256-cfb for one block, a few, a pooled buffer, an unaligned one and 100 KB', () => {
    const key = randomBytes(32);
    const iv = randomBytes(16);
    for (const blocks of [1, 2, 3, 200, 6_401]) {
      const plain = randomBytes(blocks * 16);
      const ciphertext = createCipheriv('aes-256-cfb', key, iv).update(plain);
      expect(cfbDecrypt(key, iv, ciphertext).equals(plain)).toBe(true);
      // At an odd offset of a larger buffer: the byte-wise XOR.
      const shifted = Buffer.concat([Buffer.alloc(3), ciphertext]).subarray(3);
      expect(cfbDecrypt(key, iv, shifted).equals(reference(key, iv, shifted))).toBe(true);
      // Pooled (small Buffer.from): any 8-byte offset of the pool.
      const pooled = Buffer.from(ciphertext);
      expect(cfbDecrypt(key, iv, pooled).equals(plain)).toBe(true);
    }
  });

  it('leaves the ciphertext unchanged, and a part with the wrong key still fails on its padding', () => {
    // Fixed bytes: with random ones a wrong key gives valid padding about once in 256 runs.
    const key = Buffer.alloc(32, 1);
    const iv = Buffer.alloc(16, 2);
    const plain = Buffer.concat([Buffer.alloc(100, 7), Buffer.alloc(12, 12)]);
    const ciphertext = createCipheriv('aes-256-cfb', key, iv).update(plain);
    const copy = Buffer.from(ciphertext);
    const opened = decryptPart(key, iv, ciphertext, 'photo.jpg.enc');
    expect(opened.ok && opened.value.equals(plain.subarray(0, 100))).toBe(true);
    expect(ciphertext.equals(copy)).toBe(true);
    const wrong = decryptPart(Buffer.alloc(32, 3), iv, ciphertext, 'photo.jpg.enc');
    expect(wrong.ok ? null : wrong.failure.reason).toBe('part_undecryptable');
  });
});

describe('PartDecipher (the streamed part)', () => {
  const key = randomBytes(32);
  const iv = randomBytes(16);
  /** The part as PKCS5-padded AES-256-CFB, cut into chunks of the sizes given in turn. */
  const chunked = (plain: Buffer, sizes: number[]): Buffer[] => {
    const pad = 16 - (plain.length % 16);
    const ciphertext = createCipheriv('aes-256-cfb', key, iv).update(Buffer.concat([plain, Buffer.alloc(pad, pad)]));
    const chunks: Buffer[] = [];
    for (let at = 0, k = 0; at < ciphertext.length; k++) {
      const size = sizes[k % sizes.length]!;
      chunks.push(ciphertext.subarray(at, at + size));
      at += size;
    }
    return chunks;
  };
  const run = async (chunks: Buffer[]): Promise<{ plain: Buffer; md5: string | null }> => {
    const d = new PartDecipher(key, iv, 'photo.jpg.enc');
    const out: Buffer[] = [];
    for await (const b of Readable.from(chunks).pipe(d)) out.push(b as Buffer);
    return { plain: Buffer.concat(out), md5: d.md5Hex };
  };

  it('gives the plaintext and its MD5 however the ciphertext is cut (whole blocks, odd sizes, single bytes)', async () => {
    for (const length of [0, 1, 15, 16, 17, 100_000]) {
      const plain = randomBytes(length);
      for (const sizes of [[65_536], [16], [1], [7, 33, 4096], [17, 1, 15]]) {
        if (length > 1000 && sizes[0] === 1) continue;
        const got = await run(chunked(plain, sizes));
        expect(got.plain.equals(plain)).toBe(true);
        expect(got.md5).toBe(createHash('md5').update(plain).digest('hex'));
      }
    }
  });

  it('fails a part that is not whole blocks, or whose padding is wrong, naming the part', async () => {
    const whole = Buffer.concat(chunked(randomBytes(40), [64]));
    await expect(run([whole.subarray(0, whole.length - 1)])).rejects.toThrow(DecryptionFailureError);
    await expect(run([])).rejects.toThrow(/photo\.jpg\.enc/);
    const tampered = Buffer.from(whole);
    tampered[tampered.length - 1]! ^= 0x55;
    await expect(run([tampered])).rejects.toThrow(/padding/);
  });
});
