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
  let refused: RateLimitVerdict | null = null;
  for (const rule of rules) {
    const subject = rule.key(req);
    if (subject === null) continue;
    const { hits, msLeft } = await store.hit(`${rule.name}:${subject.toLowerCase().slice(0, 200)}`, rule.windowMs);
    if (hits > rule.limit && !refused) refused = { rule: rule.name, retryAfterSeconds: Math.max(1, Math.ceil(msLeft / 1000)) };
  }
  return refused;
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
