/**
 * A small in-process cache with a time to live, so a token lookup does not hit Postgres on
 * every request. Bounded: when full, the oldest entry goes (Map keeps insertion order).
 * Other processes see a revocation only after the TTL (AUTH_TOKEN_CACHE_TTL_MS, docs/auth.md).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    if (this.ttlMs <= 0) return undefined;
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches, e.g. all cached tokens of a disabled user. */
  deleteWhere(pred: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (pred(entry.value)) this.entries.delete(key);
  }
}
