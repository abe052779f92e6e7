import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { failed, ok, type Outcome } from './decryption-failure.js';

/** A PEM private key is a few kilobytes even for RSA-8192; more is not a key. */
const MAX_KEY_CHARS = 16_384;
/** Keys the platform accepts for new forms (ODK's own tools make 2048-bit keys). */
export const MIN_PUBLIC_KEY_BITS = 2_048;
/** Older forms may carry smaller keys; their submissions still decrypt. */
const MIN_PRIVATE_KEY_BITS = 1_024;

const PEM_PRIVATE = /-----BEGIN (RSA )?PRIVATE KEY-----/;
const PEM_ENCRYPTED = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/;
const PEM_ARMOUR = /-----(BEGIN|END) [A-Z ]+-----/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * An RSA private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`, what ODK Central and OpenSSL 3
 * write) or PKCS#1 (`BEGIN RSA PRIVATE KEY`, what ODK's guide and Briefcase users have).
 * Passphrase-protected PEM is refused with a message saying so.
 */
export function loadPrivateKey(pem: string): Outcome<KeyObject> {
  if (typeof pem !== 'string' || pem.length > MAX_KEY_CHARS) return failed('private_key_invalid', 'The private key is not a PEM RSA private key.');
  if (PEM_ENCRYPTED.test(pem)) return failed('private_key_invalid', 'The private key is passphrase-protected PEM; give it unprotected (for example `openssl pkey -in key.pem`).');
  if (!PEM_PRIVATE.test(pem)) return failed('private_key_invalid', 'The private key must be PEM: "BEGIN PRIVATE KEY" (PKCS#8) or "BEGIN RSA PRIVATE KEY" (PKCS#1).');
  let key: KeyObject;
  try {
    // An empty passphrase: a protected key that slipped past the check fails instead of prompting.
    key = createPrivateKey({ key: pem.trim(), format: 'pem', passphrase: '' });
  } catch {
    return failed('private_key_invalid', 'The private key could not be read as a PEM RSA private key.');
  }
  if (key.asymmetricKeyType !== 'rsa') return failed('private_key_invalid', 'The private key is not an RSA key.');
  if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_PRIVATE_KEY_BITS) return failed('private_key_invalid', `The private key is smaller than ${MIN_PRIVATE_KEY_BITS} bits.`);
  return ok(key);
}

/**
 * An RSA public key as forms carry it (`base64RsaPublicKey`: the base64 of the SPKI DER, no
 * armour); PEM is read too. At least 2048 bits.
 */
export function loadPublicKey(text: string): Outcome<KeyObject> {
  if (typeof text !== 'string' || text.length > MAX_KEY_CHARS) return failed('public_key_invalid', 'The public key is not a base64 SPKI RSA public key.');
  const compact = text.replace(PEM_ARMOUR, '').replace(/\s+/g, '');
  if (!compact || compact.length % 4 !== 0 || !BASE64.test(compact)) return failed('public_key_invalid', 'The public key must be the base64 of an RSA SubjectPublicKeyInfo (as in base64RsaPublicKey).');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(compact, 'base64'), format: 'der', type: 'spki' });
  } catch {
    return failed('public_key_invalid', 'The public key is not a DER SubjectPublicKeyInfo.');
  }
  if (key.asymmetricKeyType !== 'rsa') return failed('public_key_invalid', 'The public key is not an RSA key.');
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_PUBLIC_KEY_BITS) return failed('public_key_invalid', `The public key has ${bits} bits; at least ${MIN_PUBLIC_KEY_BITS} are required.`);
  return ok(key);
}

/** `base64RsaPublicKey` of a key: the base64 of its SPKI DER, one line. */
export function base64Spki(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ format: 'der', type: 'spki' }).toString('base64');
}

/**
 * A public identifier of a key pair: SHA-256 of the public key's SPKI DER, base64url. Stored
 * beside a sealed private key and comparable with a form's public key.
 */
export function keyId(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({ format: 'der', type: 'spki' })).digest('base64url');
}

/** RSA modulus length in bytes (the length of every wrapped key and signature). */
export function modulusBytes(key: KeyObject): number {
  return Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
}
