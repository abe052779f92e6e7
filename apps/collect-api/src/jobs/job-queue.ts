import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { JOB_QUEUE, jobOptions, QueueName, type JobItem } from './job.types.js';

/** The producer side of every queue: typed jobs in, Bull jobs (with their kind's options) out. */
@Injectable()
export class JobQueue {
  private readonly logger = new Logger(JobQueue.name);
  private readonly queues: Map<QueueName, Queue>;

  constructor(
    @InjectQueue(QueueName.Delivery) delivery: Queue,
    @InjectQueue(QueueName.MediaVariants) mediaVariants: Queue,
    @InjectQueue(QueueName.Exports) exports: Queue,
  ) {
    this.queues = new Map([[QueueName.Delivery, delivery], [QueueName.MediaVariants, mediaVariants], [QueueName.Exports, exports]]);
    for (const [name, queue] of this.queues) queue.on('error', (err: Error) => this.logger.warn({ queue: name, err: err.message }, 'queue error'));
  }

  queue(name: QueueName): Queue {
    return this.queues.get(name)!;
  }

  async add(item: JobItem): Promise<void> {
    await this.queue(JOB_QUEUE[item.name]).add(item.name, item.data, jobOptions(item));
  }

  /** One round trip per queue for many jobs (the outbox relay's batches). */
  async addBulk(items: JobItem[]): Promise<void> {
    const byQueue = new Map<QueueName, JobItem[]>();
    for (const item of items) {
      const list = byQueue.get(JOB_QUEUE[item.name]);
      if (list) list.push(item);
      else byQueue.set(JOB_QUEUE[item.name], [item]);
    }
    await Promise.all([...byQueue].map(([name, list]) => this.queue(name).addBulk(list.map((item) => ({ name: item.name, data: item.data, opts: jobOptions(item) })))));
  }
}
