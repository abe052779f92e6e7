import { hashToken, newHexKey, newOpaqueSecret, safeEqual, SecretBox } from './secrets.js';

describe('secrets', () => {
  it('makes 40-hex API keys and 43-char opaque secrets, all different', () => {
    const keys = new Set(Array.from({ length: 100 }, newHexKey));
    expect(keys.size).toBe(100);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{40}$/);
    expect(newOpaqueSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('hashes tokens to 64 hex, deterministically', () => {
    expect(hashToken('abc')).toBe(hashToken('abc'));
    expect(hashToken('abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken('abc')).not.toBe(hashToken('abd'));
  });

  it('encrypts and decrypts; another secret or a tampered box gives null', () => {
    const sut = new SecretBox('s'.repeat(32));
    const box = sut.encrypt('my-token');
    expect(box).not.toContain('my-token');
    expect(sut.encrypt('my-token')).not.toBe(box); // fresh IV each time
    expect(sut.decrypt(box)).toBe('my-token');
    expect(new SecretBox('t'.repeat(32)).decrypt(box)).toBeNull();
    const parts = box.split('.');
    parts[3] = Buffer.from('other').toString('base64url');
    expect(sut.decrypt(parts.join('.'))).toBeNull();
    expect(sut.decrypt('garbage')).toBeNull();
  });

  it('signs and verifies', () => {
    const sut = new SecretBox('s'.repeat(32));
    expect(sut.verify('a', sut.sign('a'))).toBe(true);
    expect(sut.verify('b', sut.sign('a'))).toBe(false);
    expect(safeEqual('a', 'ab')).toBe(false);
  });
});
