import { KeyEncryption } from './key-encryption.js';

describe('KeyEncryption', () => {
  const sut = new KeyEncryption('a-key-encryption-secret-for-tests');

  it('round-trips and never repeats a ciphertext', () => {
    const a = sut.encrypt('{"d":"secret"}');
    const b = sut.encrypt('{"d":"secret"}');
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(sut.decrypt(a)).toBe('{"d":"secret"}');
  });

  it('refuses a tampered ciphertext or another key, naming the variable', () => {
    const sealed = sut.encrypt('x'.repeat(40));
    const parts = sealed.split('.');
    parts[3] = Buffer.from('y'.repeat(40)).toString('base64url');
    expect(() => sut.decrypt(parts.join('.'))).toThrow(/CAS_KEY_ENCRYPTION_KEY/);
    expect(() => new KeyEncryption('another-secret-entirely-123').decrypt(sealed)).toThrow(/CAS_KEY_ENCRYPTION_KEY/);
    expect(() => sut.decrypt('v0.a.b.c')).toThrow(/format/);
  });

  it('opens keys sealed under the previous secret, and tells them from current ones', () => {
    const old = new KeyEncryption('the-old-key-encryption-secret');
    const sealedOld = old.encrypt('private');
    const rotated = new KeyEncryption('the-new-key-encryption-secret', 'the-old-key-encryption-secret');
    expect(rotated.decrypt(sealedOld)).toBe('private');
    expect(rotated.isCurrent(sealedOld)).toBe(false);
    const sealedNew = rotated.encrypt('private');
    expect(rotated.isCurrent(sealedNew)).toBe(true);
    expect(() => old.decrypt(sealedNew)).toThrow(/CAS_KEY_ENCRYPTION_KEY differs/);
    expect(() => new KeyEncryption('a-third-secret-value-0000', 'a-fourth-secret-value-000').decrypt(sealedOld)).toThrow(/CAS_KEY_ENCRYPTION_KEY and CAS_KEY_ENCRYPTION_KEY_PREVIOUS differ/);
    expect(() => rotated.decrypt('v0.a.b.c')).toThrow(/format/);
  });
});
