import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { RequesterRate } from '../../cache/requester-rate.js';
import { CollectConfig } from '../../config/collect-config.js';

/**
 * Test-fires per user: TEST_FIRE_PER_USER_PER_MINUTE, then 429 with `Retry-After`
 * (docs/security.md, "Rate limits, quotas and forwarding input"). A test-fire is sent at once,
 * outside the outbox, so without this a user could make the platform send as fast as it
 * answers; the destination's own limit applies as well.
 */
@Injectable()
export class TestFireQuota implements OnModuleDestroy {
  private readonly rate: RequesterRate;

  constructor(config: CollectConfig) {
    this.rate = new RequesterRate(config, 'test-fire', config.TEST_FIRE_PER_USER_PER_MINUTE, `At most ${config.TEST_FIRE_PER_USER_PER_MINUTE} test-fires a minute per user; try again later.`);
  }

  take(userKey: string): Promise<void> {
    return this.rate.take(userKey);
  }

  onModuleDestroy(): void {
    this.rate.close();
  }
}
