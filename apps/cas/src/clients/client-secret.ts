import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url: what `cas clients create` prints once. */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function hashClientSecret(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

export function clientSecretMatches(storedHash: string | null | undefined, presented: unknown): boolean {
  if (!storedHash || typeof presented !== 'string') return false;
  const a = Buffer.from(hashClientSecret(presented));
  const b = Buffer.from(storedHash);
  return a.length === b.length && timingSafeEqual(a, b);
}
