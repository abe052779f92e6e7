import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';

/**
 * Failed password logins per username in a fixed window, kept in Redis so every API process
 * shares the count: after AUTH_LOCKOUT_MAX_FAILURES (5) failures in AUTH_LOCKOUT_WINDOW_SECONDS
 * (15 min) further attempts answer 429 with Retry-After until the window ends. When Redis is
 * unreachable the check fails open (logged): an outage must not lock every user out.
 */
@Injectable()
export class LoginLockoutService implements OnModuleDestroy {
  private readonly logger = new Logger('LoginLockout');
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(@Inject(COLLECT_CONFIG) private readonly config: CollectConfig) {
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1500 });
    this.redis.on('error', () => undefined);
    this.prefix = `${config.REDIS_PREFIX}:auth:login-failures:`;
  }

  /** Seconds until the user may try again, or 0 when not locked out. */
  async retryAfter(username: string): Promise<number> {
    try {
      const key = this.key(username);
      const [count, ttl] = await Promise.all([this.redis.get(key), this.redis.ttl(key)]);
      if (Number(count ?? 0) < this.config.AUTH_LOCKOUT_MAX_FAILURES) return 0;
      return ttl > 0 ? ttl : this.config.AUTH_LOCKOUT_WINDOW_SECONDS;
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'lockout check skipped: redis unavailable');
      return 0;
    }
  }

  async recordFailure(username: string, via: string): Promise<void> {
    try {
      const key = this.key(username);
      const count = await this.redis.incr(key);
      if (count === 1) await this.redis.expire(key, this.config.AUTH_LOCKOUT_WINDOW_SECONDS);
      this.logger.warn({ username: username.slice(0, 150), failures: count, via }, 'failed login');
      if (count === this.config.AUTH_LOCKOUT_MAX_FAILURES) this.logger.warn({ username: username.slice(0, 150), via }, 'user locked out');
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'failed login not counted: redis unavailable');
    }
  }

  async reset(username: string): Promise<void> {
    try {
      await this.redis.del(this.key(username));
    } catch {
      // Nothing to undo: the count expires with its window.
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }

  private key(username: string): string {
    return this.prefix + username.toLowerCase().slice(0, 150);
  }
}
