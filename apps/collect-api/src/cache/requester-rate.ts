import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { TooManyRequestsError } from '@collect/contracts';
import { RedisRateLimitStore } from '@collect/platform';
import type { CollectConfig } from '../config/collect-config.js';

/**
 * A per-requester count in a one-minute window shared by every replica through Redis, for work
 * a user starts on demand (test-fires, image variants: docs/security.md, "Rate limits, quotas
 * and forwarding input"). Past `limit`: 429 with `Retry-After` and `detail`. Redis down: not
 * counted (logged), like the request limits, an outage must not stop the work.
 */
export class RequesterRate {
  private readonly logger: Logger;
  private readonly redis: Redis;
  private readonly store: RedisRateLimitStore;

  constructor(
    config: Pick<CollectConfig, 'REDIS_URL' | 'REDIS_PREFIX'>,
    private readonly name: string,
    private readonly limit: number,
    private readonly detail: string,
  ) {
    this.logger = new Logger(`RequesterRate:${name}`);
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1500 });
    this.redis.on('error', () => undefined);
    this.store = new RedisRateLimitStore(this.redis, `${config.REDIS_PREFIX}:${name}:`);
  }

  /** Counts one unit of work of `requester`; throws 429 past the limit. */
  async take(requester: string): Promise<void> {
    let hit;
    try {
      hit = await this.store.hit(requester, 60_000);
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'not counted: redis unavailable');
      return;
    }
    if (hit.hits > this.limit) throw new TooManyRequestsError(this.detail, hit.msLeft / 1000);
  }

  close(): void {
    this.redis.disconnect();
  }
}
