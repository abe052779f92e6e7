import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BullModule } from '@nestjs/bull';
import { structuredLoggerModule } from '@collect/platform';
import { ConfigModule } from './config/config.module.js';
import type { CollectConfig } from './config/collect-config.js';
import { ChangeNotificationsModule } from './database/change-notifications.module.js';
import { ReadPoolModule } from './database/read-pool.module.js';
import { dataSourceOptions } from './data-source.js';
import { CollectHealthModule } from './health/collect-health.module.js';
import { MetricsModule } from './health/metrics.module.js';
import { featureModules } from './feature-modules.js';
import { backgroundModules } from './worker.module.js';

@Module({})
export class AppModule {
  /** `worker: true` adds the worker's background modules (tests and local runs in one process). */
  static forRoot(config: CollectConfig, options: { worker?: boolean } = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        structuredLoggerModule('collect-api', config.LOG_LEVEL),
        TypeOrmModule.forRoot({ ...dataSourceOptions(config), migrationsRun: false }),
        BullModule.forRoot({ redis: config.REDIS_URL, prefix: config.REDIS_PREFIX }),
        ChangeNotificationsModule,
        ReadPoolModule,
        CollectHealthModule,
        MetricsModule,
        ...featureModules,
        ...(options.worker ? backgroundModules : []),
      ],
    };
  }
}
