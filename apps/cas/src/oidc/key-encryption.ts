import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

/**
 * Private signing keys are stored encrypted with AES-256-GCM under a key derived (scrypt) from
 * CAS_KEY_ENCRYPTION_KEY, so a database dump alone cannot mint tokens.
 * Format: `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
export class KeyEncryption {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = scryptSync(secret, 'cas-signing-keys-v1', 32);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unknown key encryption format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('cannot decrypt a signing key: CAS_KEY_ENCRYPTION_KEY differs from the one that encrypted it');
    }
  }
}
