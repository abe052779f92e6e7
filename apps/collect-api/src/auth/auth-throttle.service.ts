import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { CollectConfig } from '../config/collect-config.js';

/** Which limit refused a password attempt: the user's lockout, the address' failures, or a Basic request rate (per address, per username). */
export type AttemptRefusal = 'lockout' | 'address' | 'basic-ip' | 'basic-user';
export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfter: number; reason: AttemptRefusal };

/**
 * Counts first, then lets the caller check: INCR of every counter that applies, in one Lua
 * script (atomic in Redis), and a refusal when one is over its limit. The counter of the
 * password check itself is thus taken before argon2 runs, so N parallel guesses get at most
 * the limit's worth of checks (docs/security.md "Atomic check-then-act").
 */
const COUNT_FIRST = `
for i = 1, #KEYS do
  local hits = redis.call('INCR', KEYS[i])
  local window = tonumber(ARGV[2 * i])
  if hits == 1 then redis.call('PEXPIRE', KEYS[i], window) end
  if hits > tonumber(ARGV[2 * i - 1]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[i], window); ttl = window end
    return {i, ttl}
  end
end
return {0, 0}`;

// A success takes its own attempt back from the address's failure count and clears the user's.
const SUCCEEDED = `
if redis.call('DECR', KEYS[1]) < 0 then redis.call('DEL', KEYS[1]) end
redis.call('DEL', KEYS[2])
return 0`;

interface Counter {
  key: string;
  limit: number;
  windowMs: number;
  reason: AttemptRefusal;
}

/**
 * The limits on authentication, shared by every API process through Redis:
 * - password lockout: AUTH_LOCKOUT_MAX_FAILURES (5) failed passwords for a username in
 *   AUTH_LOCKOUT_WINDOW_SECONDS (15 min), Basic and `/o/login` alike;
 * - failed authentications of any scheme from one address: RATE_LIMIT_AUTH_FAILURES_PER_IP
 *   (100) per RATE_LIMIT_WINDOW_SECONDS, then 429 for every authentication from it;
 * - Basic requests on every route: RATE_LIMIT_BASIC_PER_IP and RATE_LIMIT_BASIC_PER_USERNAME
 *   per window (each one costs a password hash).
 * Password attempts are counted before the password is checked (count first; a success gives
 * its attempt back). Other schemes are counted when they fail: their check is a lookup, not a
 * guessable secret; the address block they lead to is also kept in this process, so a blocked
 * address costs no Redis round trip. Redis unreachable: fail open (logged), an outage must not
 * lock everyone out.
 */
@Injectable()
export class AuthThrottleService implements OnModuleDestroy {
  private readonly logger = new Logger('AuthThrottle');
  private readonly redis: Redis;
  private readonly prefix: string;
  /** Addresses over the failure limit, until when (ms): refused without a round trip. */
  private readonly blocked = new Map<string, number>();

  constructor(private readonly config: CollectConfig) {
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1500 });
    this.redis.on('error', () => undefined);
    this.prefix = `${config.REDIS_PREFIX}:auth:`;
  }

  /** Seconds an address must wait after too many failed authentications, or 0. */
  blockedFor(ip: string): number {
    const until = this.blocked.get(ip);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left > 0) return Math.ceil(left / 1000);
    this.blocked.delete(ip);
    return 0;
  }

  /**
   * Counts a password attempt before it is checked: refused (with the seconds to wait) when the
   * username is locked out, the address has failed too often, or (Basic) a request rate is over.
   */
  async beginPasswordAttempt(username: string, ip: string, via: 'basic' | 'login'): Promise<AttemptVerdict> {
    const windowMs = this.config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    const counters: Counter[] = [];
    if (this.config.RATE_LIMIT_ENABLED && via === 'basic') {
      counters.push({ key: `basic-ip:${ip}`, limit: this.config.RATE_LIMIT_BASIC_PER_IP, windowMs, reason: 'basic-ip' });
      counters.push({ key: `basic-user:${userKey(username)}`, limit: this.config.RATE_LIMIT_BASIC_PER_USERNAME, windowMs, reason: 'basic-user' });
    }
    if (this.config.RATE_LIMIT_ENABLED) counters.push({ key: `ip-failures:${ip}`, limit: this.config.RATE_LIMIT_AUTH_FAILURES_PER_IP, windowMs, reason: 'address' });
    counters.push({ key: this.lockoutKey(username), limit: this.config.AUTH_LOCKOUT_MAX_FAILURES, windowMs: this.config.AUTH_LOCKOUT_WINDOW_SECONDS * 1000, reason: 'lockout' });
    let verdict: [number, number];
    try {
      verdict = (await this.redis.eval(COUNT_FIRST, counters.length, ...counters.map((c) => this.prefix + c.key), ...counters.flatMap((c) => [c.limit, c.windowMs]))) as [number, number];
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'password attempt not counted: redis unavailable');
      return { allowed: true };
    }
    const [index, ttl] = verdict.map(Number);
    if (index === 0) return { allowed: true };
    const counter = counters[index - 1];
    const retryAfter = Math.max(1, Math.ceil(ttl / 1000));
    if (counter.reason === 'address') this.block(ip, ttl);
    this.logger.warn({ username: username.slice(0, 150), via, reason: counter.reason }, counter.reason === 'lockout' ? 'login refused: user locked out' : 'login refused: rate limit');
    return { allowed: false, retryAfter, reason: counter.reason };
  }

  /** The password was wrong (its attempt stays counted). */
  failedPassword(username: string, via: string): void {
    this.logger.warn({ username: username.slice(0, 150), via }, 'failed login');
  }

  /** The password was right: the attempt is taken back and the user's failures cleared. */
  async succeededPassword(username: string, ip: string): Promise<void> {
    try {
      await this.redis.eval(SUCCEEDED, 2, `${this.prefix}ip-failures:${ip}`, this.prefix + this.lockoutKey(username));
    } catch {
      // Nothing to undo: the counts expire with their window.
    }
  }

  /**
   * A failed authentication of a scheme that is not a password, counted after the fact: the
   * address is blocked once its count reaches the limit, so the next attempt is refused.
   */
  async failedOther(ip: string): Promise<void> {
    if (!this.config.RATE_LIMIT_ENABLED) return;
    const windowMs = this.config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    const blockAt = this.config.RATE_LIMIT_AUTH_FAILURES_PER_IP - 1;
    try {
      const [index, ttl] = ((await this.redis.eval(COUNT_FIRST, 1, `${this.prefix}ip-failures:${ip}`, blockAt, windowMs)) as [number, number]).map(Number);
      if (index !== 0) this.block(ip, ttl);
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'failed authentication not counted: redis unavailable');
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }

  private block(ip: string, ttlMs: number): void {
    if (this.blocked.size >= 10_000) this.blocked.delete(this.blocked.keys().next().value!);
    this.blocked.set(ip, Date.now() + ttlMs);
  }

  private lockoutKey(username: string): string {
    return `login-failures:${userKey(username)}`;
  }
}

function userKey(username: string): string {
  return username.toLowerCase().slice(0, 150);
}
