import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A DRF-style API / temporary token: 40 lowercase hex characters (160 random bits). */
export function newHexKey(): string {
  return randomBytes(20).toString('hex');
}

/** An opaque OAuth 2.0 secret (codes, access and refresh tokens, client secrets): 256 random bits. */
export function newOpaqueSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Lookup hash of a high-entropy token. SHA-256 is enough here (unlike passwords): the input has
 * 160+ random bits, so there is nothing to brute-force, and the hot path stays cheap.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * Keys derived from COLLECT_SECRET_KEY: one encrypts tokens that must be shown again (the API
 * and temporary tokens on /api/v1/user), one signs cookies and CSRF tokens of the /o/ pages.
 */
export class SecretBox {
  private readonly encKey: Buffer;
  private readonly macKey: Buffer;

  constructor(secret: string) {
    this.encKey = createHmac('sha256', secret).update('collect-api token encryption v1').digest();
    this.macKey = createHmac('sha256', secret).update('collect-api signing v1').digest();
  }

  /** AES-256-GCM; output `v1.<iv>.<tag>.<ciphertext>` in base64url. */
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  /** Null when the value was encrypted under another secret or tampered with. */
  decrypt(box: string): string | null {
    const [v, iv, tag, ct] = box.split('.');
    if (v !== 'v1' || !iv || !tag || ct === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encKey, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }

  sign(value: string): string {
    return createHmac('sha256', this.macKey).update(value, 'utf8').digest('base64url');
  }

  verify(value: string, signature: string): boolean {
    return safeEqual(this.sign(value), signature);
  }
}
