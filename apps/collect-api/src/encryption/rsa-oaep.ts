import { constants, createHash, privateDecrypt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { modulusBytes } from './rsa-keys.js';
import { unwrapInThread, type DecryptedFile, type KeyedPart } from './crypto-threads.js';

/**
 * The RSA-OAEP readings an ODK envelope may have been wrapped with, in the order tried
 * (docs/encryption.md "Key wrapping"). Collect asks for `RSA/NONE/OAEPWithSHA256AndMGF1Padding`,
 * which Bouncy Castle reads as SHA-256 with MGF1-SHA-256 (Enketo's node-forge call ends up the
 * same); Java's own provider reads the hyphenated name as SHA-256 with MGF1-SHA-1; plain SHA-1
 * OAEP is what other encryptors default to.
 */
export type OaepVariant = 'sha256-mgf1-sha256' | 'sha256-mgf1-sha1' | 'sha1-mgf1-sha1';
export const OAEP_VARIANTS: readonly OaepVariant[] = ['sha256-mgf1-sha256', 'sha256-mgf1-sha1', 'sha1-mgf1-sha1'];

/**
 * Unwraps `wrapped` with the private key, trying each variant (`first` before the others);
 * returns the plaintext and the variant that opened it, or null when none does or the plaintext
 * is not `expectedLength` bytes. OpenSSL does the variants whose OAEP and MGF1 hashes agree;
 * the mixed one is the raw RSA operation and an RFC 8017 decoding below.
 */
export function unwrapOaep(key: KeyObject, wrapped: Buffer, expectedLength: number, first?: OaepVariant): { plaintext: Buffer; variant: OaepVariant } | null {
  if (wrapped.length !== modulusBytes(key)) return null;
  const order = first ? [first, ...OAEP_VARIANTS.filter((v) => v !== first)] : OAEP_VARIANTS;
  for (const variant of order) {
    const plaintext = unwrapWith(key, wrapped, variant);
    if (plaintext && plaintext.length === expectedLength) return { plaintext, variant };
  }
  return null;
}

/**
 * Collect's reading (`sha256-mgf1-sha256`, the first unwrapOaep tries) in one of the process's
 * crypto threads (crypto-threads.ts) instead of on the event loop: a server-mode intake's two RSA
 * operations were most of its time on the event loop (docs/encryption.md, "Server mode"). The
 * plaintext when that reading opens `wrapped` to `expectedLength` bytes, else null: the caller
 * then runs unwrapOaep, which tries every reading and decides. The same OpenSSL operation as
 * unwrapOaep's first try.
 */
export async function unwrapOaepOffThread(key: KeyObject, wrapped: Buffer, expectedLength: number): Promise<Buffer | null> {
  return (await unwrapManyOffThread(key, [{ wrapped, expectedLength }])).plaintexts[0] ?? null;
}

/**
 * unwrapOaepOffThread for several values in one message to a thread, and with `part`, that part
 * decrypted there with the first value as its AES key (crypto-threads.ts, unwrapInThread).
 * `plaintexts` follows `items`; `part` is null unless the first opened to an AES key.
 */
export async function unwrapManyOffThread(key: KeyObject, items: Array<{ wrapped: Buffer; expectedLength: number }>, part: KeyedPart | null = null): Promise<{ plaintexts: Array<Buffer | null>; part: DecryptedFile | null }> {
  const none = { plaintexts: items.map(() => null), part: null };
  if (key.asymmetricKeyType !== 'rsa') return none;
  const size = modulusBytes(key);
  // A value of another length than the modulus opens with no reading: none such, no message; among others, it goes as no bytes.
  if (!items.some((i) => i.wrapped.length === size)) return none;
  const answer = await unwrapInThread(key, items.map((i) => (i.wrapped.length === size ? i.wrapped : Buffer.alloc(0))), part);
  if (!answer) return none;
  const plaintexts = answer.plaintexts.map((p, n) => (p && p.length === items[n]!.expectedLength ? p : null));
  return { plaintexts, part: plaintexts[0] ? answer.part : null };
}

function unwrapWith(key: KeyObject, wrapped: Buffer, variant: OaepVariant): Buffer | null {
  // A variant that does not open the key throws, which is expected: the error gets no stack
  // trace (V8 captures one per error constructed, a cost paid on every fallback).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    if (variant === 'sha256-mgf1-sha1') {
      const em = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, wrapped);
      return decodeOaep(em, 'sha256', 'sha1');
    }
    // OpenSSL's MGF1 digest defaults to the OAEP digest.
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: variant === 'sha256-mgf1-sha256' ? 'sha256' : 'sha1' }, wrapped);
  } catch {
    return null;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** MGF1 (RFC 8017 B.2.1) of `seed`, `length` bytes. */
export function mgf1(hash: 'sha1' | 'sha256', seed: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  const counter = Buffer.alloc(4);
  for (let i = 0, offset = 0; offset < length; i++) {
    counter.writeUInt32BE(i);
    const block = createHash(hash).update(seed).update(counter).digest();
    offset += block.copy(out, offset);
  }
  return out;
}

/**
 * EME-OAEP decoding (RFC 8017 7.1.2 step 3) with an empty label. Every check is folded into
 * one flag and the message start found without an early exit, so the work does not depend on
 * where a malformed block goes wrong.
 */
function decodeOaep(em: Buffer, hash: 'sha1' | 'sha256', mgfHash: 'sha1' | 'sha256'): Buffer | null {
  const hLen = hash === 'sha1' ? 20 : 32;
  const k = em.length;
  if (k < 2 * hLen + 2) return null;
  const maskedSeed = em.subarray(1, 1 + hLen);
  const maskedDb = em.subarray(1 + hLen);
  const seedMask = mgf1(mgfHash, maskedDb, hLen);
  const seed = Buffer.alloc(hLen);
  for (let i = 0; i < hLen; i++) seed[i] = maskedSeed[i]! ^ seedMask[i]!;
  const dbMask = mgf1(mgfHash, seed, maskedDb.length);
  const db = Buffer.alloc(maskedDb.length);
  for (let i = 0; i < db.length; i++) db[i] = maskedDb[i]! ^ dbMask[i]!;

  let good = em[0] === 0 ? 1 : 0;
  good &= timingSafeEqual(db.subarray(0, hLen), createHash(hash).digest()) ? 1 : 0;
  // Past the label hash: zero bytes, then 0x01, then the message.
  let found = 0;
  let start = 0;
  for (let i = hLen; i < db.length; i++) {
    const isOne = db[i] === 1 ? 1 : 0;
    const isZero = db[i] === 0 ? 1 : 0;
    const first = isOne & (found ^ 1);
    start = first ? i + 1 : start;
    good &= found | isZero | isOne;
    found |= isOne;
  }
  good &= found;
  return good ? Buffer.from(db.subarray(start)) : null;
}
