import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

export type SubmissionEventType = 'submission.created' | 'submission.updated' | 'submission.deleted';

export interface SubmissionEvent {
  type: SubmissionEventType;
  formId: number;
  submissionId: number;
  /** meta/instanceID without `uuid:` (after an edit: the new one). */
  instanceUuid: string;
}

/** Runs inside the transaction that stores the change; a throw rolls the submission back. */
export type TransactionalSubmissionHook = (event: SubmissionEvent, manager: EntityManager) => Promise<void>;
/** Runs after commit; errors are logged, never surfaced to the submitter. */
export type SubmissionListener = (event: SubmissionEvent) => void | Promise<void>;

/**
 * Domain events of submissions. Two ways in, see docs/forms.md:
 * - `useTransactionalHook`: called with the EntityManager of the storing transaction, so a
 *   consumer (rest services) writes its outbox rows atomically with the submission.
 * - `onCommitted`: called after the transaction committed (never for a rolled-back change).
 */
@Injectable()
export class SubmissionEvents {
  private readonly logger = new Logger(SubmissionEvents.name);
  private readonly hooks: TransactionalSubmissionHook[] = [];
  private readonly listeners: SubmissionListener[] = [];

  useTransactionalHook(hook: TransactionalSubmissionHook): void {
    this.hooks.push(hook);
  }

  onCommitted(listener: SubmissionListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Called by the submissions service inside its transaction. */
  async inTransaction(event: SubmissionEvent, manager: EntityManager): Promise<void> {
    for (const hook of this.hooks) await hook(event, manager);
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
