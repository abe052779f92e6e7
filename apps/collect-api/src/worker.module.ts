import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BullModule } from '@nestjs/bull';
import { structuredLoggerModule } from '@collect/platform';
import { ConfigModule } from './config/config.module.js';
import type { CollectConfig } from './config/collect-config.js';
import { ChangeNotificationsModule } from './database/change-notifications.module.js';
import { ReadPoolModule } from './database/read-pool.module.js';
import { dataSourceOptions } from './data-source.js';
import { CollectHealthModule } from './health/collect-health.module.js';
import { JobWorkerModule } from './jobs/job-worker.module.js';
import { MediaModule } from './media/media.module.js';
import { ExportsModule } from './exports/exports.module.js';
import { DeliveryOutboxModule } from './restservices/delivery/delivery-outbox.module.js';
import { DeliveryWorkerModule } from './restservices/delivery-worker.module.js';
import { RestServicesModule } from './restservices/restservices.module.js';
import { StorageModule } from './storage/storage.module.js';
import { SubmissionsWorkerModule } from './submissions/submissions-worker.module.js';

/**
 * What only a worker runs: every queue consumed by its `@OnJob` handler, the outbox relay,
 * the delivery-log pruner and the folding of kept submission counts. worker.ts boots them in WorkerModule; a test app may add them to the
 * HTTP app (`createCollectApp(config, { worker: true })`) to deliver in one process.
 */
export const backgroundModules: Type[] = [JobWorkerModule, DeliveryWorkerModule, SubmissionsWorkerModule];

/**
 * The worker process (dist/worker.js): the modules whose providers hold the job handlers
 * (rest services, media variants, exports), no HTTP application. Its probes are served by
 * worker-probes.ts.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: CollectConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        structuredLoggerModule('collect-worker', config.LOG_LEVEL),
        TypeOrmModule.forRoot({ ...dataSourceOptions(config), migrationsRun: false }),
        BullModule.forRoot({ redis: config.REDIS_URL, prefix: config.REDIS_PREFIX }),
        ChangeNotificationsModule,
        ReadPoolModule,
        CollectHealthModule,
        StorageModule,
        DeliveryOutboxModule,
        RestServicesModule,
        MediaModule,
        ExportsModule,
        ...backgroundModules,
      ],
    };
  }
}
