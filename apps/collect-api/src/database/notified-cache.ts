import type { ChangeNotifications } from './change-notifications.js';

export interface NotifiedCacheOptions {
  /** Upper bound on an entry's age, a backstop for a change made with the triggers off. 0 = no caching. */
  ttlMs: number;
  /** Entries kept; the least recently used goes first. */
  maxEntries: number;
  now?: () => number;
}

/**
 * A process-local cache whose entries are dropped when ChangeNotifications reports a change of
 * their rows (any process, at commit), and which serves nothing while the notifications are
 * down. A load that overlaps an invalidation is not stored: it may have read the row before
 * the change committed.
 */
export class NotifiedCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  /** Bumped by every invalidation; a load stores its result only if it did not move meanwhile. */
  private generation = 0;
  private readonly now: () => number;

  constructor(
    private readonly changes: Pick<ChangeNotifications, 'live' | 'onReset'>,
    private readonly options: NotifiedCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    changes.onReset(() => this.clear());
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    if (!this.changes.live || this.options.ttlMs <= 0) return undefined;
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.expiresAt <= this.now()) return undefined;
    this.entries.set(key, hit); // most recently used last
    return hit.value;
  }

  /** The cached value, or `load()`'s (stored unless an invalidation overlapped the load). */
  async getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    return this.load(key, load);
  }

  /** Always `load()`s, and stores the result under the same rule as getOrLoad. */
  async load(key: string, load: () => Promise<V>): Promise<V> {
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) this.set(key, value);
    return value;
  }

  invalidate(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  invalidateWhere(pred: (key: string) => boolean): void {
    this.generation++;
    for (const key of this.entries.keys()) if (pred(key)) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  private set(key: string, value: V): void {
    if (!this.changes.live || this.options.ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.options.ttlMs });
  }
}
