import { type CanActivate, type ExecutionContext, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { TooManyRequestsError } from '@collect/contracts';
import { checkRateLimits, RedisRateLimitStore, type RateLimitRule } from '@collect/platform';
import { requestAddress } from '../auth/http-types.js';
import { CollectConfig } from '../config/collect-config.js';
import { rateLimitedRoute, type RateLimitedRequest } from './rate-limited-routes.js';

/**
 * Global guard that counts only the routes of RATE_LIMITED_ROUTES (login and token endpoints),
 * per client address and per credential, in Redis so every replica shares the counts.
 * Over a limit: 429 with `Retry-After` (`/o/token` answers the RFC 6749 shape through the error
 * filter). Redis down: requests pass (logged), like the login lockout.
 *
 * Not @nestjs/throttler: a count shared by replicas would need its Redis storage as a second
 * package, for what these lines do (docs/security.md, "Abuse limits").
 */
@Injectable()
export class RateLimitGuard implements CanActivate, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private readonly store: RedisRateLimitStore;
  private readonly rules: Array<RateLimitRule<RateLimitedRequest>>;

  constructor(private readonly config: CollectConfig) {
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1500 });
    this.redis.on('error', () => undefined);
    this.store = new RedisRateLimitStore(this.redis, `${config.REDIS_PREFIX}:rate-limit:`);
    const windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    this.rules = [
      { name: 'ip', windowMs, limit: 0, key: (req) => requestAddress(req) },
      { name: 'credential', windowMs, limit: 0, key: (req) => rateLimitedRoute(req)?.credential(req) ?? null },
    ];
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.config.RATE_LIMIT_ENABLED || context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<RateLimitedRequest>();
    const route = rateLimitedRoute(req);
    if (!route) return true;
    const rules = this.rules.map((r) => ({ ...r, name: `${route.method}${route.path}:${r.name}`, limit: r.name === 'ip' ? route.perIp(this.config) : route.perCredential(this.config) }));
    let verdict;
    try {
      verdict = await checkRateLimits(this.store, rules, req);
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'rate limit not counted: redis unavailable');
      return true;
    }
    if (!verdict) return true;
    this.logger.warn({ event: 'rate_limited', rule: verdict.rule }, 'request refused by rate limit');
    throw new TooManyRequestsError('Too many requests. Try again later.', verdict.retryAfterSeconds);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
