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
 * already in hand. One AES-256-ECB pass over IV || C[0..n-2], then an XOR with C: OpenSSL's ECB
 * runs the blocks side by side, where its CFB decryption runs them one after another, and this
 * took half the time of `aes-256-cfb` for a 100 KB part (docs/encryption.md "Parts").
 */
export function cfbDecrypt(aesKey: Buffer, iv: Buffer, ciphertext: Buffer): Buffer {
  const ecb = aesEcb(aesKey);
  const out = cfbBlocks(ecb, iv, ciphertext);
  ecb.final();
  return out;
}

function aesEcb(aesKey: Buffer): Cipheriv {
  return createCipheriv('aes-256-ecb', aesKey, null).setAutoPadding(false);
}

/** The plaintext of whole ciphertext blocks that follow the block (or IV) `before` (cfbDecrypt), through a running ECB cipher. */
function cfbBlocks(ecb: Cipheriv, before: Buffer, ciphertext: Buffer): Buffer {
  const n = ciphertext.length;
  const out = Buffer.allocUnsafe(n);
  ecb.update(before).copy(out, 0);
  if (n > BLOCK) ecb.update(ciphertext.subarray(0, n - BLOCK)).copy(out, BLOCK);
  if ((out.byteOffset & 3) === 0 && (ciphertext.byteOffset & 3) === 0) {
    const o = new Int32Array(out.buffer, out.byteOffset, n >> 2);
    const c = new Int32Array(ciphertext.buffer, ciphertext.byteOffset, n >> 2);
    for (let i = 0; i < o.length; i++) o[i]! ^= c[i]!;
  } else {
    for (let i = 0; i < n; i++) out[i]! ^= ciphertext[i]!;
  }
  return out;
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
  /** The ciphertext block before the next one (the IV at first). */
  private before: Buffer;
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
    this.before = Buffer.from(iv);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.cipherBytes += chunk.length;
    const data = this.partial.length ? Buffer.concat([this.partial, chunk]) : chunk;
    const whole = data.length - (data.length % BLOCK);
    this.partial = whole < data.length ? Buffer.from(data.subarray(whole)) : EMPTY;
    if (whole > 0) {
      const blocks = data.subarray(0, whole);
      const plain = cfbBlocks(this.ecb, this.before, blocks);
      this.before = Buffer.from(blocks.subarray(whole - BLOCK));
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
