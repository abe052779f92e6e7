import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { JobQueue } from './job-queue.js';
import { QueueName } from './job.types.js';

/**
 * The Bull queues of job.types.ts and their producer (JobQueue). Imported wherever jobs are
 * added; consuming them is the worker's business (JobWorkerModule).
 */
@Module({
  imports: [
    BullModule.registerQueueAsync({
      name: QueueName.Delivery,
      inject: [COLLECT_CONFIG],
      useFactory: (config: CollectConfig) => ({
        // A job's lock must outlive one request; a worker that dies loses its lock and Bull
        // hands the job on (the row lease in PostgreSQL is the backstop).
        settings: { lockDuration: config.FORWARD_TIMEOUT_MS + 10_000, stalledInterval: Math.min(config.FORWARD_TIMEOUT_MS + 10_000, 30_000), maxStalledCount: 2 },
      }),
    }),
    BullModule.registerQueue({ name: QueueName.MediaVariants }, { name: QueueName.Exports }),
  ],
  providers: [JobQueue],
  exports: [JobQueue],
})
export class JobsModule {}
