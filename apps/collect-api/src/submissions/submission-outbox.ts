import type { EntityManager } from 'typeorm';
import type { SubmissionEvent } from './submission-events.js';

/**
 * The port through which the storing transaction records what must leave the platform because
 * of a submission change (rest-service deliveries). Declared here, implemented by
 * restservices/delivery-outbox.ts and bound to this token in restservices/delivery-outbox.module.ts
 * (docs/architecture.md, "Jobs"). Each call runs inside the transaction, so the record and the
 * change commit or roll back together.
 */
export interface SubmissionOutbox {
  record(m: EntityManager, event: SubmissionEvent): Promise<void>;
}

export const SUBMISSION_OUTBOX = Symbol('SUBMISSION_OUTBOX');
