import type { JobOptions } from 'bull';

/**
 * Every background job of collect-api, typed in one place (docs/architecture.md, "Jobs"):
 * the Bull queues, the discriminated union of job payloads and each kind's queue and options.
 * Producers call JobQueue.add(item); the worker process runs the one `@OnJob(name)` handler of
 * each kind (JobHandlerRegistry refuses to boot with a kind handled zero or two times).
 */
export const QueueName = {
  /** Rest-service work: the outbox rows of a replay to write (the rows themselves are claimed from PostgreSQL, delivery-relay.ts). */
  Delivery: 'restservice-deliveries',
  /** Image variants made right after a submission (MEDIA_VARIANTS_AT_SUBMISSION). */
  MediaVariants: 'media-variants',
  /** Asynchronous exports (`POST /api/v1/export`): long, memory-bounded, one at a time per worker. */
  Exports: 'data-exports',
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];
export const QUEUE_NAMES = Object.values(QueueName);

export type JobItem =
  /** Write the outbox rows of a replay of existing submissions (resumable past its cursor). */
  | { name: 'replay'; data: { replayId: number } }
  /** Make the image variants of one submission's attachments. */
  | { name: 'make-variants'; data: { submissionId: number } }
  /** Write one asynchronous export's file (export_jobs.id); the row holds what and for whom. */
  | { name: 'export'; data: { exportId: string } };

export type JobName = JobItem['name'];

/** What a handler is given besides its payload. */
export interface JobContext {
  /** Aborted when the worker starts draining (SIGTERM): a handler gives back what it has not started. */
  readonly stopping: AbortSignal;
}
export type JobData<N extends JobName> = Extract<JobItem, { name: N }>['data'];

/** The queue of each kind; a kind missing here does not compile. */
export const JOB_QUEUE: { [N in JobName]: QueueName } = {
  replay: QueueName.Delivery,
  'make-variants': QueueName.MediaVariants,
  export: QueueName.Exports,
};
export const JOB_NAMES = Object.keys(JOB_QUEUE) as JobName[];

/** Bull options of one job: de-duplication ids and clean-up, per kind. */
export function jobOptions(item: JobItem): JobOptions {
  const done = { removeOnComplete: true, removeOnFail: true };
  switch (item.name) {
    // One writer per replay at a time (its row lock orders it against a cancel anyway).
    case 'replay':
      return { ...done, jobId: `replay-${item.data.replayId}` };
    // A lost variant job costs only speed: the variant is made on its first request.
    case 'make-variants':
      return { ...done, attempts: 1 };
    // The export id as job id: one writer per export. One attempt: the handler records a
    // failure in the row itself; a worker that dies mid-export loses its Bull lock and the job
    // is run again from the start (the file is rewritten whole).
    case 'export':
      return { ...done, attempts: 1, jobId: `export-${item.data.exportId}` };
  }
}
