import { Module } from '@nestjs/common';
import { HealthModule } from '@collect/platform';
import { DataSource } from 'typeorm';
import { databaseCheck } from './readiness.js';
import { RedisHealth } from './redis-health.js';

@Module({ providers: [RedisHealth], exports: [RedisHealth] })
class RedisHealthModule {}

export const CollectHealthModule = HealthModule.register({
  imports: [RedisHealthModule],
  inject: [DataSource, RedisHealth],
  useFactory: ((ds: DataSource, redis: RedisHealth) => [databaseCheck(ds), redis]) as never,
});

export { RedisHealthModule };
