import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

/**
 * Private signing keys are stored encrypted with AES-256-GCM under a key derived (scrypt) from
 * CAS_KEY_ENCRYPTION_KEY, so a database dump alone cannot mint tokens.
 * Format: `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
 *
 * Changing CAS_KEY_ENCRYPTION_KEY: the old value moves to CAS_KEY_ENCRYPTION_KEY_PREVIOUS, which
 * only decrypts, until `cas keys reencrypt` has sealed every stored key under the new one.
 */
export class KeyEncryption {
  private readonly key: Buffer;
  private readonly previous: Buffer | null;

  constructor(secret: string, previousSecret?: string) {
    this.key = scryptSync(secret, 'cas-signing-keys-v1', 32);
    this.previous = previousSecret ? scryptSync(previousSecret, 'cas-signing-keys-v1', 32) : null;
  }

  /** True when `sealed` opens with the current key (nothing to re-encrypt). */
  isCurrent(sealed: string): boolean {
    try {
      open(sealed, this.key);
      return true;
    } catch {
      return false;
    }
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    try {
      return open(sealed, this.key);
    } catch (err) {
      if (err instanceof FormatError) throw err;
      if (this.previous) {
        try {
          return open(sealed, this.previous);
        } catch {
          // Neither key: the message below names both variables.
        }
      }
      throw new Error(
        `cannot decrypt a signing key: CAS_KEY_ENCRYPTION_KEY${this.previous ? ' and CAS_KEY_ENCRYPTION_KEY_PREVIOUS differ' : ' differs'} from the one that encrypted it`,
      );
    }
  }
}

class FormatError extends Error {}

function open(sealed: string, key: Buffer): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new FormatError('unknown key encryption format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}
