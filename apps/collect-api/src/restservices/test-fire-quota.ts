import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { TooManyRequestsError } from '@collect/contracts';
import { RedisRateLimitStore } from '@collect/platform';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';

/**
 * Test-fires per user: TEST_FIRE_PER_USER_PER_MINUTE in a one-minute window shared by every
 * replica through Redis, then 429 with `Retry-After` (docs/security.md, "Rate limits, quotas
 * and forwarding input"). A test-fire is sent at once, outside the outbox, so without this a
 * user could make the platform send as fast as it answers. Redis down: counted nowhere, the
 * destination's own limit still applies (logged), like the other request limits.
 */
@Injectable()
export class TestFireQuota implements OnModuleDestroy {
  private readonly logger = new Logger(TestFireQuota.name);
  private readonly redis: Redis;
  private readonly store: RedisRateLimitStore;

  constructor(@Inject(COLLECT_CONFIG) private readonly config: CollectConfig) {
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1500 });
    this.redis.on('error', () => undefined);
    this.store = new RedisRateLimitStore(this.redis, `${config.REDIS_PREFIX}:test-fire:`);
  }

  /** Counts one test-fire of `userKey`; throws 429 past the limit. */
  async take(userKey: string): Promise<void> {
    let hit;
    try {
      hit = await this.store.hit(userKey, 60_000);
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'test-fire not counted: redis unavailable');
      return;
    }
    if (hit.hits > this.config.TEST_FIRE_PER_USER_PER_MINUTE) {
      throw new TooManyRequestsError(`At most ${this.config.TEST_FIRE_PER_USER_PER_MINUTE} test-fires a minute per user; try again later.`, hit.msLeft / 1000);
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
