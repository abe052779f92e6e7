import { basicUsername, BatchedRateLimitStore, checkRateLimits, type RateLimitBackend, type RateLimitStore } from './rate-limit.js';

/** A shared backend as several replicas would see it (one map). */
class SharedCounts implements RateLimitBackend {
  readonly rows = new Map<string, number>();
  calls = 0;
  async add(entries: Array<{ key: string; windowMs: number; n: number }>) {
    this.calls++;
    return entries.map((e) => {
      const hits = (this.rows.get(e.key) ?? 0) + e.n;
      this.rows.set(e.key, hits);
      return { hits, msLeft: e.windowMs };
    });
  }
}

describe('rate limits', () => {
  it('checkRateLimits: counts every rule that applies, refuses on the first over its limit', async () => {
    const counts = new Map<string, number>();
    const store: RateLimitStore = { hit: async (key) => ({ hits: counts.set(key, (counts.get(key) ?? 0) + 1).get(key)!, msLeft: 1500 }) };
    const rules = [
      { name: 'ip', limit: 2, windowMs: 60_000, key: (r: { ip: string; user?: string }) => r.ip },
      { name: 'user', limit: 5, windowMs: 60_000, key: (r: { ip: string; user?: string }) => r.user ?? null },
    ];
    expect(await checkRateLimits(store, rules, { ip: 'a', user: 'Bob' })).toBeNull();
    expect(await checkRateLimits(store, rules, { ip: 'a', user: 'bob' })).toBeNull();
    expect(await checkRateLimits(store, rules, { ip: 'a' })).toEqual({ rule: 'ip', retryAfterSeconds: 2 });
    expect(counts.get('user:bob')).toBe(2); // case variants share a counter
  });

  it('BatchedRateLimitStore: first hit reads the shared count, later hits are local until flushed', async () => {
    const shared = new SharedCounts();
    const a = new BatchedRateLimitStore(shared, 60_000);
    const b = new BatchedRateLimitStore(shared, 60_000);
    expect((await a.hit('k', 1000)).hits).toBe(1);
    expect((await a.hit('k', 1000)).hits).toBe(2);
    expect((await a.hit('k', 1000)).hits).toBe(3);
    expect(shared.calls).toBe(1);
    await a.flush();
    expect(shared.rows.get('k')).toBe(3);
    expect((await b.hit('k', 1000)).hits).toBe(4);
    expect((await a.hit('k', 1000)).hits).toBe(4); // a's view: shared 3 + 1 pending
    await a.flush();
    expect((await a.hit('k', 1000)).hits).toBe(6);
    a.close();
    b.close();
  });

  it('BatchedRateLimitStore: hits on their way to the backend still count while the flush waits for its answer', async () => {
    // A backend that answers only when told: the flush is in flight while more requests come.
    const shared = new SharedCounts();
    let release: () => void = () => undefined;
    const slow: RateLimitBackend = {
      add: async (entries) => {
        if (shared.calls > 0) await new Promise<void>((r) => (release = r));
        return shared.add(entries);
      },
    };
    const store = new BatchedRateLimitStore(slow, 60_000);
    for (let i = 1; i <= 3; i++) expect((await store.hit('k', 1000)).hits).toBe(i);
    const flushing = store.flush();
    expect((await store.hit('k', 1000)).hits).toBe(4); // was 2: the two sent hits vanished until the answer
    release();
    await flushing;
    expect(shared.rows.get('k')).toBe(3);
    expect((await store.hit('k', 1000)).hits).toBe(5);
    store.close();
  });

  it('basicUsername: the client id of a Basic header, form-decoded', () => {
    const h = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
    expect(basicUsername(h('my%20client:secret'))).toBe('my client');
    expect(basicUsername(h('plain'))).toBe('plain');
    expect(basicUsername(h('%E0%A4%A:x'))).toBe('%E0%A4%A');
    expect(basicUsername('Bearer x')).toBeNull();
    expect(basicUsername(undefined)).toBeNull();
  });
});
