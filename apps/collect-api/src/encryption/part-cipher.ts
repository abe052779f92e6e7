import { createCipheriv, createHash, type Cipheriv, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { DecryptionFailureError, failed, ok, type DecryptionFailure, type Outcome } from './decryption-failure.js';

export const AES_KEY_BYTES = 32;
const BLOCK = 16;
const EMPTY = Buffer.alloc(0);

/**
 * The IV of the part at `index` (media in manifest order, then the submission XML): the seed is
 * MD5(instanceID as UTF-8, then the AES key); before the i-th part is ciphered byte `i % 16` of
 * the seed is incremented (wrapping at 256), so part i's IV carries increments 0..i
 * (docs/encryption.md "Parts").
 */
export function partIv(instanceId: string, aesKey: Buffer, index: number): Buffer {
  const seed = createHash('md5').update(instanceId, 'utf8').update(aesKey).digest();
  for (let i = 0; i <= index; i++) seed[i % BLOCK] = (seed[i % BLOCK]! + 1) & 0xff;
  return seed;
}

/**
 * The IV Enketo actually uses for the part at `index`. Enketo keeps the seed as JavaScript
 * numbers, so a byte at 255 becomes 256 instead of wrapping, and node-forge reads the IV string
 * four characters at a time as `c0 << 24 ^ c1 << 16 ^ c2 << 8 ^ c3`: a 256 there leaves 0 in its
 * own byte (as Java's wrap does) but flips the lowest bit of the byte before it in the same
 * 32-bit word. Equal to partIv() unless a seed byte that started at 0xFF was incremented
 * (docs/encryption.md "Parts").
 */
export function enketoPartIv(instanceId: string, aesKey: Buffer, index: number): Buffer {
  const seed = [...createHash('md5').update(instanceId, 'utf8').update(aesKey).digest()];
  for (let i = 0; i <= index; i++) seed[i % BLOCK]! += 1;
  const iv = Buffer.alloc(BLOCK);
  for (let w = 0; w < 4; w++) {
    const [a, b, c, d] = seed.slice(w * 4, w * 4 + 4) as [number, number, number, number];
    iv.writeUInt32BE(((a << 24) ^ (b << 16) ^ (c << 8) ^ d) >>> 0, w * 4);
  }
  return iv;
}

function undecryptable(file: string, why: string): DecryptionFailure {
  return { reason: 'part_undecryptable', message: `The part ${file} does not decrypt with the envelope's key (${why}).`, file };
}

/** PKCS5 padding length of the final block, or 0 when it is not valid padding. */
function paddingLength(lastBlock: Buffer): number {
  const n = lastBlock[lastBlock.length - 1]!;
  let good = n >= 1 && n <= BLOCK ? 1 : 0;
  for (let i = 0; i < BLOCK; i++) {
    const inPad = i >= BLOCK - n ? 1 : 0;
    good &= inPad ? (lastBlock[i] === n ? 1 : 0) : 1;
  }
  return good ? n : 0;
}

/**
 * AES-256-CFB (128-bit feedback) decryption of whole blocks held in memory: plaintext block i is
 * AES(C[i-1]) XOR C[i], with C[-1] the IV, so every block's keystream comes from ciphertext
 * already in hand. One AES-256-ECB pass over the ciphertext, then an XOR with C shifted by one
 * block: OpenSSL's ECB runs the blocks side by side, where its CFB decryption runs them one after
 * another, and this took half the time of `aes-256-cfb` for a 100 KB part (docs/encryption.md "Parts").
 */
export function cfbDecrypt(aesKey: Buffer, iv: Buffer, ciphertext: Buffer): Buffer {
  const ecb = aesEcb(aesKey);
  const first = ecb.update(iv);
  const out = ecb.update(ciphertext);
  ecb.final();
  cfbInPlace(out, first, ciphertext);
  return out;
}

function aesEcb(aesKey: Buffer): Cipheriv {
  return createCipheriv('aes-256-ecb', aesKey, null).setAutoPadding(false);
}

/**
 * Turns `ecbOut` = AES-ECB(ciphertext), whole blocks, into the plaintext in place: block i is
 * `ecbOut` block i-1 XOR C[i], block 0 is `first` (the AES of the block or IV before) XOR C[0].
 * Written from the end, so each keystream block is read before its place is overwritten: one
 * buffer per chunk (OpenSSL's output), where a separate plaintext buffer doubled the bytes the
 * garbage collector had to reclaim (docs/encryption.md "Parts"). The caller keeps `ecbOut`'s
 * last block first when it needs it (the keystream of the block after).
 */
function cfbInPlace(ecbOut: Buffer, first: Buffer, ciphertext: Buffer): void {
  const n = ciphertext.length;
  if ((ecbOut.byteOffset & 3) === 0 && (ciphertext.byteOffset & 3) === 0 && (first.byteOffset & 3) === 0) {
    const o = new Int32Array(ecbOut.buffer, ecbOut.byteOffset, n >> 2);
    const c = new Int32Array(ciphertext.buffer, ciphertext.byteOffset, n >> 2);
    for (let i = o.length - 1; i >= 4; i--) o[i] = o[i - 4]! ^ c[i]!;
    const f = new Int32Array(first.buffer, first.byteOffset, 4);
    for (let i = 0; i < 4; i++) o[i] = f[i]! ^ c[i]!;
  } else {
    for (let i = n - 1; i >= BLOCK; i--) ecbOut[i] = ecbOut[i - BLOCK]! ^ ciphertext[i]!;
    for (let i = 0; i < BLOCK; i++) ecbOut[i] = first[i]! ^ ciphertext[i]!;
  }
}

/** Decrypts one whole part held in memory: AES-256-CFB, then PKCS5 padding removed and checked. */
export function decryptPart(aesKey: Buffer, iv: Buffer, ciphertext: Buffer, file: string): Outcome<Buffer> {
  if (ciphertext.length === 0 || ciphertext.length % BLOCK !== 0) {
    const f = undecryptable(file, `${ciphertext.length} bytes is not a whole number of AES blocks`);
    return failed(f.reason, f.message, f.file);
  }
  const padded = cfbDecrypt(aesKey, iv, ciphertext);
  const pad = paddingLength(padded.subarray(padded.length - BLOCK));
  if (!pad) {
    const f = undecryptable(file, 'its padding is wrong');
    return failed(f.reason, f.message, f.file);
  }
  return ok(padded.subarray(0, padded.length - pad));
}

/**
 * A stream that decrypts one part as it flows: every byte but the last block passes at once,
 * the last block is held until the end to remove its padding. It also computes the MD5 of the
 * plaintext (`md5Hex` once finished) for the element signature. A part that is not whole AES
 * output fails the stream with a DecryptionFailureError.
 */
export class PartDecipher extends Transform {
  /** AES-256-CFB decryption as cfbDecrypt does it, block-aligned run by run. */
  private readonly ecb: Cipheriv;
  /** The keystream of the next block: AES of the ciphertext block before it (of the IV at first). */
  private next: Buffer;
  /** Ciphertext short of a whole block, waiting for the next chunk. */
  private partial: Buffer = EMPTY;
  /** The last plaintext block so far, held back for its padding. */
  private held: Buffer = EMPTY;
  private readonly md5: Hash = createHash('md5');
  private cipherBytes = 0;
  /** Hex MD5 of the plaintext, set when the stream has ended without error. */
  md5Hex: string | null = null;

  constructor(aesKey: Buffer, iv: Buffer, private readonly file: string) {
    super();
    this.ecb = aesEcb(aesKey);
    this.next = this.ecb.update(iv);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.cipherBytes += chunk.length;
    const data = this.partial.length ? Buffer.concat([this.partial, chunk]) : chunk;
    const whole = data.length - (data.length % BLOCK);
    this.partial = whole < data.length ? Buffer.from(data.subarray(whole)) : EMPTY;
    if (whole > 0) {
      const blocks = data.subarray(0, whole);
      const plain = this.ecb.update(blocks);
      const after = Buffer.from(plain.subarray(whole - BLOCK));
      cfbInPlace(plain, this.next, blocks);
      this.next = after;
      this.pass(this.held);
      this.pass(plain.subarray(0, whole - BLOCK));
      this.held = plain.subarray(whole - BLOCK);
    }
    done();
  }

  private pass(plain: Buffer): void {
    if (!plain.length) return;
    this.md5.update(plain);
    this.push(plain);
  }

  override _flush(done: TransformCallback): void {
    this.ecb.final();
    const last = this.held;
    if (this.cipherBytes === 0 || this.cipherBytes % BLOCK !== 0 || last.length !== BLOCK) {
      done(new DecryptionFailureError(undecryptable(this.file, `${this.cipherBytes} bytes is not a whole number of AES blocks`)));
      return;
    }
    const pad = paddingLength(last);
    if (!pad) {
      done(new DecryptionFailureError(undecryptable(this.file, 'its padding is wrong')));
      return;
    }
    const rest = last.subarray(0, BLOCK - pad);
    this.md5.update(rest);
    this.md5Hex = this.md5.digest('hex');
    if (rest.length) this.push(rest);
    done();
  }
}
