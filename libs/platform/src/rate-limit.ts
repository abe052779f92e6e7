/**
 * Fixed-window request counting shared by both services. A store counts hits per key in a
 * window that starts with the first hit; every replica must see the same counts, so the stores
 * live in Redis (collect-api) or PostgreSQL (cas, which has no Redis).
 */
export interface RateLimitStore {
  /** Counts one hit on `key`; `msLeft` is the time until the window (and any refusal) ends. */
  hit(key: string, windowMs: number): Promise<{ hits: number; msLeft: number }>;
}

/** The few ioredis calls the Redis store needs (contracts does not depend on ioredis). */
export interface RedisLike {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

// INCR, and start the window on the first hit; PTTL says how long it has left.
const HIT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {hits, ttl}`;

export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: RedisLike,
    private readonly prefix: string,
  ) {}

  async hit(key: string, windowMs: number): Promise<{ hits: number; msLeft: number }> {
    const [hits, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, `${this.prefix}${key}`, windowMs)) as [number, number];
    return { hits: Number(hits), msLeft: Number(ttl) };
  }
}

export interface RateLimitRule<Req> {
  /** Part of the key and of the log line: `token-ip`, `login-username`. */
  name: string;
  limit: number;
  windowMs: number;
  /** What is counted (an address, a client id, a username); null: this rule does not apply. */
  key(req: Req): string | null;
}

export interface RateLimitVerdict {
  rule: string;
  retryAfterSeconds: number;
}

/** Counts the request against every rule that applies; the first rule over its limit refuses it. */
export async function checkRateLimits<Req>(store: RateLimitStore, rules: Array<RateLimitRule<Req>>, req: Req): Promise<RateLimitVerdict | null> {
  const counted = rules.flatMap((rule) => {
    const subject = rule.key(req);
    return subject === null ? [] : [{ rule, key: `${rule.name}:${subject.toLowerCase().slice(0, 200)}`, windowMs: rule.windowMs }];
  });
  if (counted.length === 0) return null;
  const results = await Promise.all(counted.map((c) => store.hit(c.key, c.windowMs)));
  for (let i = 0; i < counted.length; i++) {
    if (results[i].hits > counted[i].rule.limit) return { rule: counted[i].rule.name, retryAfterSeconds: Math.max(1, Math.ceil(results[i].msLeft / 1000)) };
  }
  return null;
}

/** The client_id of an HTTP Basic client authentication header, or null. */
export function basicUsername(authorization: string | undefined): string | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  const user = i === -1 ? decoded : decoded.slice(0, i);
  try {
    // RFC 6749 §2.3.1: client credentials are form-urlencoded before Basic encoding.
    return decodeURIComponent(user.replace(/\+/g, ' ')) || null;
  } catch {
    return user || null;
  }
}

/** A shared counter store that adds several hits per key in one round trip. */
export interface RateLimitBackend {
  add(entries: Array<{ key: string; windowMs: number; n: number }>): Promise<Array<{ hits: number; msLeft: number }>>;
}

/**
 * Counts in the process and adds the counts to the shared backend every `flushMs`, so a hot
 * endpoint pays no round trip per request. The count a request sees is the shared total as of
 * the last flush plus this process's hits since: replicas see each other's hits at most
 * `flushMs` late (the first hit of a key in a window reads the shared count at once).
 */
export class BatchedRateLimitStore implements RateLimitStore {
  // `sending`: hits on their way to the backend in a flush; counted until its answer (which
  // includes them) replaces `shared`, so a request during a flush never sees fewer hits than
  // were made.
  private readonly counters = new Map<string, { windowMs: number; pending: number; sending: number; shared: number; endsAt: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly backend: RateLimitBackend,
    private readonly flushMs: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  async hit(key: string, windowMs: number): Promise<{ hits: number; msLeft: number }> {
    const now = Date.now();
    const c = this.counters.get(key);
    if (!c || c.endsAt <= now) {
      // The first hit of a key in a window asks the backend, so a replica that has not seen
      // this key yet starts from the shared count (one round trip per key and window).
      try {
        const [shared] = await this.backend.add([{ key, windowMs, n: 1 }]);
        this.counters.set(key, { windowMs, pending: 0, sending: 0, shared: shared.hits, endsAt: Date.now() + shared.msLeft });
        return shared;
      } catch (err) {
        this.onError(err);
        this.counters.set(key, { windowMs, pending: 0, sending: 0, shared: 1, endsAt: now + windowMs });
        return { hits: 1, msLeft: windowMs };
      }
    }
    c.pending++;
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    this.timer.unref?.();
    return { hits: c.shared + c.sending + c.pending, msLeft: c.endsAt - now };
  }

  /** Sends pending counts; also called on shutdown. */
  async flush(): Promise<void> {
    this.timer = null;
    if (this.flushing) return this.flushing;
    const batch = [...this.counters].filter(([, c]) => c.pending > 0).map(([key, c]) => ({ key, c, n: c.pending }));
    if (batch.length === 0) return;
    for (const b of batch) {
      b.c.pending -= b.n;
      b.c.sending += b.n;
    }
    this.flushing = this.backend
      .add(batch.map((b) => ({ key: b.key, windowMs: b.c.windowMs, n: b.n })))
      .then((results) => {
        const now = Date.now();
        results.forEach((r, i) => {
          batch[i].c.sending -= batch[i].n;
          batch[i].c.shared = r.hits;
          batch[i].c.endsAt = now + r.msLeft;
        });
      })
      .catch((err) => {
        for (const b of batch) {
          b.c.sending -= b.n;
          b.c.shared += b.n;
        }
        this.onError(err);
      })
      .finally(() => {
        this.flushing = null;
        const now = Date.now();
        for (const [key, c] of this.counters) if (c.endsAt <= now && c.pending === 0) this.counters.delete(key);
        if (!this.timer && [...this.counters.values()].some((c) => c.pending > 0)) this.timer = setTimeout(() => void this.flush(), this.flushMs);
      });
    return this.flushing;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
