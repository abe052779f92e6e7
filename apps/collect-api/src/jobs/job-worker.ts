import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { JobQueue } from './job-queue.js';
import { QUEUE_NAMES, QueueName, type JobItem } from './job.types.js';

/**
 * The consumer side: every queue processed by the registry's handlers. Exists only in the
 * worker composition (worker.module.ts, or a test app built with the worker). On shutdown it
 * stops taking jobs, tells the running ones (JobContext.stopping: a job of several parts gives
 * back the parts it has not started) and waits for them (SIGTERM drain); waiting jobs stay in Redis.
 */
@Injectable()
export class JobWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobWorker.name);
  private readonly stopping = new AbortController();

  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly jobs: JobQueue,
  ) {}

  private concurrency(queue: QueueName): number {
    // Exports one at a time: each holds a cursor's batch and a writer's buffers (docs/exports.md).
    return queue === QueueName.Exports ? 1 : 2;
  }

  onApplicationBootstrap(): void {
    for (const name of QUEUE_NAMES) {
      const queue = this.jobs.queue(name);
      queue.on('failed', (job, err) => this.logger.error({ queue: name, job: job.name, data: job.data as unknown, err: err.message }, 'job failed'));
      // '*': one processor for every kind of the queue; the job's name picks the handler.
      void queue.process('*', this.concurrency(name), (job) => this.registry.run({ name: job.name, data: job.data } as JobItem, { stopping: this.stopping.signal }));
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await Promise.all(QUEUE_NAMES.map((name) => this.jobs.queue(name).pause(true, false).catch((err: Error) => this.logger.warn({ queue: name, err: err.message }, 'could not drain the queue'))));
  }
}
