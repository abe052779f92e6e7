import type { EntityManager } from 'typeorm';
import type { SubmissionEvent } from './submission-events.js';

/**
 * The port through which the storing transaction records what must leave the platform because
 * of a submission change (rest-service deliveries). Declared here, implemented by
 * restservices/delivery/delivery-outbox.ts and bound to this token in restservices/delivery/delivery-outbox.module.ts
 * (docs/architecture.md, "Jobs"). Each call runs inside the transaction, so the record and the
 * change commit or roll back together.
 */
export interface SubmissionOutbox {
  /**
   * A created, updated or deleted submission, after its rows (attachments included) are written.
   * `missingMedia`: for a `created` OpenRosa submission, the attachments its XML names that have
   * not arrived yet (ODK Collect splits large submissions over several POSTs).
   */
  record(m: EntityManager, event: SubmissionEvent, options?: { missingMedia?: string[] }): Promise<void>;
  /** More attachments of a stored submission arrived (a later POST of a split submission); `missingMedia` = still missing. */
  attachmentsAdded(m: EntityManager, submissionId: number, missingMedia: string[]): Promise<void>;
  /** The transaction of `m` committed: what it recorded may be handed on now (never called after a rollback). */
  committed(m: EntityManager): void;
  /**
   * One-statement intake (docs/architecture.md, "The walk of a submission"): a new submission
   * without attachments is stored by ONE statement, with no transaction around it, and its
   * `created` outbox rows are written by a data-modifying CTE of that same statement, so the
   * row and its outbox still commit together. This is that CTE's statement: it reads the new
   * `submissions` row from the CTE named `inserted` (`RETURNING *`) and returns one row per
   * outbox row written. `attached`: the CTE of the same statement that inserted the new rows'
   * attachments (`RETURNING *`; a new OpenRosa instance whose files are all there): the outbox
   * rows take the attachments from it, as a sibling CTE's rows are not yet in the table for the
   * statement.
   */
  createdRowsSql(inserted: string, attached?: string): string;
  /** The one-statement intake committed, having written `count` outbox rows (createdRowsSql). */
  createdRowsWritten(count: number): void;
}

export const SUBMISSION_OUTBOX = Symbol('SUBMISSION_OUTBOX');
