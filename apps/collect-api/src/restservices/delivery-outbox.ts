import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { SubmissionEvent } from '../submissions/submission-events.js';
import type { SubmissionOutbox } from '../submissions/submission-outbox.js';
import { namesFor } from './forwarders/index.js';
import type { DeliveryEvent } from './restservice.entities.js';

/** NOTIFY channel of new outbox rows; the worker's relay LISTENs on it (delivery-relay.ts). */
export const DELIVERY_CHANNEL = 'rest_deliveries';

const EVENT: Record<SubmissionEvent['type'], DeliveryEvent> = {
  'submission.created': 'created',
  'submission.updated': 'updated',
  'submission.deleted': 'deleted',
};

/**
 * The rest-service side of the submissions' outbox port: inside the storing transaction, one
 * rest_deliveries row per active service of the form that takes this event, and a NOTIFY that
 * PostgreSQL delivers to the relay at commit (never for a rollback). One statement, so a form
 * without services costs one index probe (docs/restservices.md, "Delivery model").
 */
@Injectable()
export class DeliveryOutbox implements SubmissionOutbox {
  constructor(private readonly ds: DataSource) {}

  async record(m: EntityManager, event: SubmissionEvent): Promise<void> {
    const kind = EVENT[event.type];
    await m.query(
      `WITH queued AS (
         INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event)
         SELECT gen_random_uuid(), id, $2, $3::varchar FROM rest_services WHERE form_id = $1 AND active AND name = ANY($4)
           AND (name <> 'spreadsheet' OR $3::varchar = 'created' OR COALESCE((options->>'sync_updates')::boolean, true))
         RETURNING 1)
       SELECT pg_notify($5, '') FROM (SELECT 1 FROM queued LIMIT 1) AS any_row`,
      [event.formId, event.submissionId, kind, namesFor(kind), DELIVERY_CHANNEL],
    );
  }

  /** Wakes the worker's relay after rows were made due outside an outbox write (manual retry, re-enable). */
  async wake(): Promise<void> {
    await this.ds.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
  }
}
