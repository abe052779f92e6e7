import { NotifiedCache } from './notified-cache.js';

function source(live = true) {
  const resets: Array<() => void> = [];
  return {
    live,
    onReset: (h: () => void) => resets.push(h),
    reset() {
      for (const h of resets) h();
    },
  };
}

describe('NotifiedCache', () => {
  it('serves a loaded value until it is invalidated', async () => {
    const cache = new NotifiedCache<number>(source(), { ttlMs: 60_000, maxEntries: 10 });
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.getOrLoad('k', load)).toBe(1);
    expect(await cache.getOrLoad('k', load)).toBe(1);
    cache.invalidate('k');
    expect(await cache.getOrLoad('k', load)).toBe(2);
  });

  it('does not store a load that an invalidation overlapped (it may have read the old row)', async () => {
    const cache = new NotifiedCache<string>(source(), { ttlMs: 60_000, maxEntries: 10 });
    let release!: (v: string) => void;
    const pending = cache.getOrLoad('k', () => new Promise<string>((r) => (release = r)));
    cache.invalidate('k');
    release('old');
    expect(await pending).toBe('old');
    expect(cache.get('k')).toBeUndefined();
  });

  it('serves and stores nothing while the notifications are down, and drops everything on a reset', async () => {
    const changes = source();
    const cache = new NotifiedCache<number>(changes, { ttlMs: 60_000, maxEntries: 10 });
    await cache.load('a', async () => 1);
    expect(cache.get('a')).toBe(1);
    changes.live = false;
    expect(cache.get('a')).toBeUndefined();
    changes.reset();
    changes.live = true;
    expect(cache.get('a')).toBeUndefined();
    changes.live = false;
    await cache.load('b', async () => 2);
    changes.live = true;
    expect(cache.get('b')).toBeUndefined();
  });

  it('bounds the age and the number of entries (least recently used goes first)', async () => {
    let now = 0;
    const cache = new NotifiedCache<number>(source(), { ttlMs: 100, maxEntries: 2, now: () => now });
    await cache.load('a', async () => 1);
    await cache.load('b', async () => 2);
    expect(cache.get('a')).toBe(1); // a is now the most recently used
    await cache.load('c', async () => 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    now = 100;
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the entries a predicate picks', async () => {
    const cache = new NotifiedCache<number>(source(), { ttlMs: 60_000, maxEntries: 10 });
    for (const k of ['x\nform1', 'y\nform1', 'x\nform2']) await cache.load(k, async () => 1);
    cache.invalidateWhere((k) => k.endsWith('\nform1'));
    expect(cache.size).toBe(1);
  });
});
