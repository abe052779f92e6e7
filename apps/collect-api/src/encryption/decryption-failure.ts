/**
 * Why an encrypted submission, a key or a sealed key could not be read. The reason is a stable
 * word that clients may match (`_decryption_error` of the data API); the message says it in a
 * sentence for a person. Neither ever holds key material (docs/encryption.md "Failures").
 */
export type DecryptionFailureReason =
  /** The manifest is not XML, not an encrypted envelope, or lacks a field. */
  | 'manifest_invalid'
  /** The private key given is not an RSA private key in PKCS#8 or PKCS#1 form. */
  | 'private_key_invalid'
  /** The public key given is not an RSA key of at least 2048 bits in SPKI form. */
  | 'public_key_invalid'
  /** The symmetric key does not unwrap with this private key (another key, or a tampered envelope). */
  | 'key_unwrap_failed'
  /** A part the manifest names has not arrived. */
  | 'part_missing'
  /** A part's bytes are not AES-256-CFB/PKCS5 output of the envelope's key (truncated or altered). */
  | 'part_undecryptable'
  /** The manifest carries no element signature. */
  | 'signature_missing'
  /** The element signature does not unwrap with this private key. */
  | 'signature_unwrap_failed'
  /** The signature unwraps but names other bytes: a part, the key, the ids or the version were changed. */
  | 'signature_mismatch'
  /** Every part decrypted and the signature verified, but the submission XML is not an instance of the form. */
  | 'instance_invalid'
  /** The passphrase does not open the sealed private key. */
  | 'passphrase_wrong'
  /** The server's key-encryption key does not open the sealed private key. */
  | 'kek_wrong'
  /** The stored sealed key is not in the format this version writes. */
  | 'sealed_key_invalid';

export interface DecryptionFailure {
  reason: DecryptionFailureReason;
  message: string;
  /** The part concerned, for part and signature failures. */
  file?: string;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: DecryptionFailure };

export function ok<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export function failed<T = never>(reason: DecryptionFailureReason, message: string, file?: string): Outcome<T> {
  return { ok: false, failure: file === undefined ? { reason, message } : { reason, message, file } };
}

/** Thrown only by the streaming decipher (a stream can fail only by an error); it carries the typed failure. */
export class DecryptionFailureError extends Error {
  constructor(readonly failure: DecryptionFailure) {
    super(failure.message);
    this.name = 'DecryptionFailureError';
  }
}
