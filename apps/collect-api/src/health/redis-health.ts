import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { ReadinessCheck } from '@collect/platform';
import { Redis } from 'ioredis';
import { CollectConfig } from '../config/collect-config.js';

/** Pings Redis on a dedicated lazy connection, so readiness does not depend on queue state. */
@Injectable()
export class RedisHealth implements ReadinessCheck, OnModuleDestroy {
  readonly name = 'redis';
  private readonly client: Redis;

  constructor(config: CollectConfig) {
    this.client = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1500 });
    this.client.on('error', () => undefined);
  }

  async check(): Promise<void> {
    if (this.client.status === 'wait' || this.client.status === 'end') await this.client.connect();
    const pong = await this.client.ping();
    if (pong !== 'PONG') throw new Error('redis did not answer PONG');
  }

  onModuleDestroy(): void {
    this.client.disconnect();
  }
}
