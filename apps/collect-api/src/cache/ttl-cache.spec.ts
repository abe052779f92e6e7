import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it('forgets entries after the TTL', () => {
    let now = 1_000;
    const sut = new TtlCache<string>(100, 10, () => now);
    sut.set('a', 'x');
    expect(sut.get('a')).toBe('x');
    now = 1_101;
    expect(sut.get('a')).toBeUndefined();
  });

  it('caches nothing with a TTL of 0, and caches null values otherwise', () => {
    const off = new TtlCache<string>(0);
    off.set('a', 'x');
    expect(off.get('a')).toBeUndefined();
    const on = new TtlCache<string | null>(1000);
    on.set('a', null);
    expect(on.get('a')).toBeNull();
  });

  it('drops the oldest entry when full, and deletes by predicate', () => {
    const sut = new TtlCache<number>(10_000, 2);
    sut.set('a', 1);
    sut.set('b', 2);
    sut.set('c', 3);
    expect(sut.get('a')).toBeUndefined();
    sut.deleteWhere((v) => v === 3);
    expect(sut.get('c')).toBeUndefined();
    expect(sut.get('b')).toBe(2);
  });
});
