import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { cfbDecrypt, decryptPart } from './part-cipher.js';

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
