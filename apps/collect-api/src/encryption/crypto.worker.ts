// The worker side of crypto-threads.ts, one message at a time: RSA-OAEP unwrappings with
// Collect's reading (SHA-256, MGF1-SHA-256), and small parts read from disk and decrypted whole
// (with a key given, or with the first key a message unwraps).
// Keys come with each message and are not kept.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { constants, createHash, privateDecrypt, type KeyObject } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import type { CryptoRequest, DecryptedFile } from './crypto-threads.js';
import { AES_KEY_BYTES, decryptPart, partIv } from './part-cipher.js';

// A reading that does not open the value throws, which is expected: no stack trace for it.
Error.stackTraceLimit = 0;

parentPort!.on('message', (request: CryptoRequest & { id: number }) => {
  if (request.kind === 'unwrap') {
    const answer = unwrapMany(request);
    reply(request.id, answer, answer.part);
  } else {
    const answer = decryptFile(request);
    reply(request.id, answer, answer);
  }
});

/**
 * Answers request `id`. A decrypted part's memory (`part`'s plaintext) moves to the event loop's
 * thread instead of being copied (a buffer Node will not let go of, one of its pools, is copied:
 * postMessage refuses it).
 */
function reply(id: number, answer: unknown, part: DecryptedFile | null): void {
  const message = { id, answer };
  try {
    parentPort!.postMessage(message, part ? [part.plaintext.buffer as ArrayBuffer] : []);
  } catch {
    parentPort!.postMessage(message);
  }
}

/**
 * Each value unwrapped with Collect's reading, and the request's part decrypted with the first
 * as its AES key and Collect's IV for the part's place, when it opened to an AES key.
 */
function unwrapMany(r: Extract<CryptoRequest, { kind: 'unwrap' }>): { plaintexts: Array<Buffer | null>; part: DecryptedFile | null } {
  const plaintexts = r.wrapped.map((w) => unwrap(r.key, w));
  const aesKey = plaintexts[0];
  const part = r.part && aesKey?.length === AES_KEY_BYTES ? decryptFile({ ...r.part, aesKey, iv: partIv(r.part.instanceId, aesKey, r.part.index) }) : null;
  return { plaintexts, part };
}

function unwrap(key: KeyObject, wrapped: Uint8Array): Buffer | null {
  try {
    // OpenSSL's MGF1 digest defaults to the OAEP digest.
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, wrapped);
  } catch {
    // Not this reading, or not this key: the caller decides (rsa-oaep.ts, unwrapOaep).
    return null;
  }
}

/**
 * The part's plaintext and its MD5, or null when the file is missing, not a regular file,
 * larger than `maxBytes`, or does not decrypt: the caller then streams it, and finds and reports
 * what is wrong as it always does.
 */
function decryptFile(r: Omit<Extract<CryptoRequest, { kind: 'part' }>, 'kind'>): DecryptedFile | null {
  let fd: number;
  try {
    fd = openSync(r.file, 'r');
  } catch {
    return null;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > r.maxBytes) return null;
    const bytes = readBuffer(info.size);
    let filled = 0;
    while (filled < info.size) {
      const n = readSync(fd, bytes, filled, info.size - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    const plain = decryptPart(Buffer.from(r.aesKey.buffer, r.aesKey.byteOffset, r.aesKey.byteLength), Buffer.from(r.iv.buffer, r.iv.byteOffset, r.iv.byteLength), bytes.subarray(0, filled), r.name);
    if (!plain.ok) return null;
    return { plaintext: plain.value, md5Hex: createHash('md5').update(plain.value).digest('hex') };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The largest ciphertext buffer a thread keeps between parts (the decrypt export's photos are at most 1 MB). */
const KEPT_MAX_BYTES = 1 << 20;
/** The thread's buffer for ciphertext, grown to the largest part of at most KEPT_MAX_BYTES read so far. */
let ciphertext: Buffer = Buffer.alloc(0);

/**
 * A buffer of at least `size` bytes for a part's ciphertext, the same one for every part of at
 * most KEPT_MAX_BYTES: the plaintext is written to a buffer of its own (cfbDecrypt), so the
 * ciphertext's is free again once decryptPart returns. A new 100 KB buffer per part, each freed
 * only by a garbage collection, cost the process's GC threads about 0.13 ms of CPU per photo,
 * more than a third of the thread's own work (docs/encryption.md, "Decrypting without a
 * server-held key"). A larger part gets a buffer of its own, not kept.
 */
function readBuffer(size: number): Buffer {
  if (size > KEPT_MAX_BYTES) return Buffer.allocUnsafeSlow(size);
  if (ciphertext.length < size) ciphertext = Buffer.allocUnsafeSlow(size);
  return ciphertext;
}
