import { Injectable, Logger } from '@nestjs/common';

export type SubmissionEventType = 'submission.created' | 'submission.updated' | 'submission.deleted';

export interface SubmissionEvent {
  type: SubmissionEventType;
  formId: number;
  submissionId: number;
  /** meta/instanceID without `uuid:` (after an edit: the new one). */
  instanceUuid: string;
}

/** Runs after commit; errors are logged, never surfaced to the submitter. */
export type SubmissionListener = (event: SubmissionEvent) => void | Promise<void>;

/**
 * After-commit notifications of submission changes (never for a rolled-back change), for work
 * that may be lost without harm (image variants). Work that must not be lost goes through the
 * SubmissionOutbox port inside the transaction instead (submission-outbox.ts).
 */
@Injectable()
export class SubmissionEvents {
  private readonly logger = new Logger(SubmissionEvents.name);
  private readonly listeners: SubmissionListener[] = [];

  onCommitted(listener: SubmissionListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Called by the submissions service after commit. */
  committed(event: SubmissionEvent): void {
    for (const listener of this.listeners) {
      Promise.resolve()
        .then(() => listener(event))
        .catch((err: unknown) => this.logger.error({ err, event }, 'submission listener failed'));
    }
  }
}
