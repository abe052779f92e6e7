import { clientSecretMatches, generateClientSecret, hashClientSecret } from './client-secret.js';

describe('client secrets', () => {
  it('are 256-bit random, stored as a sha256 hash and compared by hash', () => {
    const secret = generateClientSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateClientSecret()).not.toBe(secret);
    const stored = hashClientSecret(secret);
    expect(stored).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(clientSecretMatches(stored, secret)).toBe(true);
    expect(clientSecretMatches(stored, `${secret}x`)).toBe(false);
    expect(clientSecretMatches(stored, undefined)).toBe(false);
    expect(clientSecretMatches(null, secret)).toBe(false);
  });
});
