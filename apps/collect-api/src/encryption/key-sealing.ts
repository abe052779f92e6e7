import { createCipheriv, createDecipheriv, createHmac, createPrivateKey, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import argon2 from 'argon2';
import { failed, ok, type Outcome } from './decryption-failure.js';
import { keyId } from './rsa-keys.js';

/**
 * Private keys at rest (docs/encryption.md "Sealed private keys", docs/security.md "Where
 * secrets live"): the PKCS#8 DER of the key, AES-256-GCM under a 256-bit key that is either
 * derived from a passphrase with argon2id or is the server's key-encryption key. Everything
 * needed to open it again except the secret (key id, KDF and its parameters, salt, IV, tag)
 * is stored beside the ciphertext and bound to it as GCM's associated data, so a changed
 * parameter fails like a wrong passphrase.
 */
export const SEALED_KEY_FORMAT = 'collect-sealed-key-v1';

export interface Argon2idParams {
  /** KiB of memory per derivation. */
  memory_kib: number;
  passes: number;
  parallelism: number;
}

/**
 * argon2id, 64 MiB, 3 passes, 1 lane: RFC 9106's second recommended profile with one lane
 * (a derivation holds one of the machine's cores). A passphrase guards a key that opens years
 * of data, so this is stronger than the login profile (19 MiB, 2 passes); it runs once per key
 * creation and once per decryption request, not per sign-in.
 */
export const DEFAULT_ARGON2ID: Argon2idParams = { memory_kib: 65_536, passes: 3, parallelism: 1 };

/** Stored parameters are refused outside these bounds: a stored row cannot make one request take a gigabyte or a minute. */
const ARGON2ID_BOUNDS = { memory_kib: [8_192, 1_048_576], passes: [1, 10], parallelism: [1, 8] } as const;

/** What is stored beside the ciphertext (all of it is GCM's associated data). */
export type SealedKeyHeader = {
  format: typeof SEALED_KEY_FORMAT;
  /** keyId() of the pair: SHA-256 of the public key's SPKI DER, base64url. */
  key_id: string;
  cipher: 'aes-256-gcm';
} & (
  | { sealed_by: 'passphrase'; kdf: { name: 'argon2id'; salt: string } & Argon2idParams }
  | { sealed_by: 'kek'; /** kekId() of the key-encryption key that sealed it. */ kek_id: string }
);

export type SealedPrivateKey = SealedKeyHeader & { iv: string; tag: string; ciphertext: string };

/**
 * RSA size of the key pairs the platform makes (Collect, Enketo and Web Forms wrap with any
 * size): 2048 bits, the size ODK's own tools make and NIST's floor through 2030. Every server-mode
 * submission costs two private-key operations on receipt, and a 3072-bit one costs five times a
 * 2048-bit one (docs/encryption.md "Server mode").
 */
export const GENERATED_KEY_BITS = 2_048;

export async function generateFormKeyPair(): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return promisify(generateKeyPair)('rsa', { modulusLength: GENERATED_KEY_BITS });
}

/** The base64 32-byte key of ENCRYPTION_KEK, or null when it is not set (server mode unavailable). */
export function kekFromConfig(value: string | undefined): Buffer | null {
  if (!value) return null;
  const kek = Buffer.from(value.trim(), 'base64');
  if (kek.length !== 32) throw new Error('ENCRYPTION_KEK must be the base64 of 32 bytes');
  return kek;
}

/** A public name of a key-encryption key (which KEK sealed a row), revealing nothing of it. */
export function kekId(kek: Buffer): string {
  return createHmac('sha256', kek).update('collect-api encryption kek id v1').digest('base64url').slice(0, 16);
}

/** Passphrases are compared as Unicode NFC: the same words typed on two systems open the same key. */
function passphraseBytes(passphrase: string): Buffer {
  return Buffer.from(passphrase.normalize('NFC'), 'utf8');
}

async function deriveKey(passphrase: string, salt: Buffer, p: Argon2idParams): Promise<Buffer> {
  return argon2.hash(passphraseBytes(passphrase), { type: argon2.argon2id, memoryCost: p.memory_kib, timeCost: p.passes, parallelism: p.parallelism, salt, hashLength: 32, raw: true });
}

/** The associated data: every stored field but the ciphertext, IV and tag, in a fixed order. */
function associatedData(s: SealedKeyHeader): Buffer {
  const how = s.sealed_by === 'passphrase' ? [s.kdf.name, s.kdf.salt, s.kdf.memory_kib, s.kdf.passes, s.kdf.parallelism] : [s.kek_id];
  return Buffer.from(JSON.stringify([s.format, s.key_id, s.cipher, s.sealed_by, ...how]), 'utf8');
}

function seal(header: SealedKeyHeader, privateKey: KeyObject, wrappingKey: Buffer): SealedPrivateKey {
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', wrappingKey, iv);
  cipher.setAAD(associatedData(header));
  const ciphertext = Buffer.concat([cipher.update(der), cipher.final()]);
  der.fill(0);
  return { ...header, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
}

/** Null when GCM refuses (wrong wrapping key or any stored field changed). */
function unseal(sealed: SealedPrivateKey, wrappingKey: Buffer): KeyObject | null {
  let der: Buffer | null = null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', wrappingKey, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(associatedData(sealed));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    der = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch {
    return null;
  } finally {
    der?.fill(0);
  }
}

export async function sealWithPassphrase(privateKey: KeyObject, passphrase: string, params: Argon2idParams = DEFAULT_ARGON2ID): Promise<SealedPrivateKey> {
  const salt = randomBytes(16);
  const header = { format: SEALED_KEY_FORMAT, key_id: keyId(privateKey), cipher: 'aes-256-gcm', sealed_by: 'passphrase', kdf: { name: 'argon2id', salt: salt.toString('base64'), ...params } } as const;
  const wrappingKey = await deriveKey(passphrase, salt, params);
  try {
    return seal(header, privateKey, wrappingKey);
  } finally {
    wrappingKey.fill(0);
  }
}

export async function openWithPassphrase(sealed: SealedPrivateKey, passphrase: string): Promise<Outcome<KeyObject>> {
  const shape = checkShape(sealed);
  if (shape) return shape;
  if (sealed.sealed_by !== 'passphrase') return failed('sealed_key_invalid', 'This key is not sealed under a passphrase.');
  const { salt, memory_kib, passes, parallelism } = sealed.kdf;
  const inBounds = (v: number, [lo, hi]: readonly [number, number]) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!inBounds(memory_kib, ARGON2ID_BOUNDS.memory_kib) || !inBounds(passes, ARGON2ID_BOUNDS.passes) || !inBounds(parallelism, ARGON2ID_BOUNDS.parallelism) || Buffer.from(salt, 'base64').length < 16) {
    return failed('sealed_key_invalid', 'The stored key\'s KDF parameters are out of bounds.');
  }
  const wrappingKey = await deriveKey(passphrase, Buffer.from(salt, 'base64'), { memory_kib, passes, parallelism });
  try {
    const key = unseal(sealed, wrappingKey);
    return key && keyId(key) === sealed.key_id ? ok(key) : failed('passphrase_wrong', 'The passphrase does not open this form\'s private key.');
  } finally {
    wrappingKey.fill(0);
  }
}

export function sealWithKek(privateKey: KeyObject, kek: Buffer): SealedPrivateKey {
  return seal({ format: SEALED_KEY_FORMAT, key_id: keyId(privateKey), cipher: 'aes-256-gcm', sealed_by: 'kek', kek_id: kekId(kek) } as const, privateKey, kek);
}

export function openWithKek(sealed: SealedPrivateKey, kek: Buffer): Outcome<KeyObject> {
  const shape = checkShape(sealed);
  if (shape) return shape;
  if (sealed.sealed_by !== 'kek') return failed('sealed_key_invalid', 'This key is not sealed under the server\'s key-encryption key.');
  if (sealed.kek_id !== kekId(kek)) return failed('kek_wrong', `This key was sealed under another ENCRYPTION_KEK (id ${sealed.kek_id}).`);
  const key = unseal(sealed, kek);
  return key && keyId(key) === sealed.key_id ? ok(key) : failed('kek_wrong', 'ENCRYPTION_KEK does not open this form\'s private key.');
}

function checkShape(s: SealedPrivateKey): Outcome<never> | null {
  const fields = s as Partial<Record<string, unknown>>;
  const strings = ['key_id', 'iv', 'tag', 'ciphertext'].every((f) => typeof fields[f] === 'string');
  if (!s || s.format !== SEALED_KEY_FORMAT || s.cipher !== 'aes-256-gcm' || !strings) return failed('sealed_key_invalid', `The stored key is not in the ${SEALED_KEY_FORMAT} format.`);
  if (s.sealed_by === 'passphrase' && (typeof s.kdf !== 'object' || s.kdf?.name !== 'argon2id' || typeof s.kdf.salt !== 'string')) return failed('sealed_key_invalid', 'The stored key\'s KDF is not argon2id.');
  return null;
}
