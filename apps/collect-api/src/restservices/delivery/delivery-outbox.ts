import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { CollectConfig } from '../../config/collect-config.js';
import { preparedQuery, preparedQueryIn } from '../../database/prepared-query.js';
import type { SubmissionEvent } from '../../submissions/submission-events.js';
import type { SubmissionOutbox } from '../../submissions/submission-outbox.js';
import { attachmentsSql, snapshotForServiceSql, snapshotSql } from './delivery-snapshot.js';
import type { DeliveryEvent } from '../restservice.entities.js';

/** NOTIFY channel of new outbox rows; the worker's relay LISTENs on it (delivery-relay.ts). */
export const DELIVERY_CHANNEL = 'rest_deliveries';
const WAKE_SQL = `SELECT pg_notify('${DELIVERY_CHANNEL}', '')`;

const EVENT: Record<SubmissionEvent['type'], DeliveryEvent> = {
  'submission.created': 'created',
  'submission.updated': 'updated',
  'submission.deleted': 'deleted',
};

/**
 * The rest-service side of the submissions' outbox port (docs/restservices.md, "Delivery
 * model"). Inside the storing transaction, ONE statement writes a rest_deliveries row per active
 * service of the form that takes this event, each with the snapshot of the submission (so every
 * attempt sends what the event was about; the one-statement intake's `created` rows take theirs
 * when the submission first changes, createdRowsSql). A form without services costs one index probe; the
 * snapshot is only built when some service takes the event. After the commit, a NOTIFY wakes
 * the worker's relay: outside the intake transaction, because PostgreSQL serializes the commits
 * of notifying transactions, and coalesced, so concurrent commits of this process share one.
 */
@Injectable()
export class DeliveryOutbox implements SubmissionOutbox {
  /** Transactions that wrote rows due now: their commit wakes the relay. */
  private readonly due = new WeakSet<EntityManager>();
  private waking: Promise<void> | null = null;
  private wakeAgain = false;

  constructor(
    private readonly ds: DataSource,
    private readonly config: CollectConfig,
  ) {}

  async record(m: EntityManager, event: SubmissionEvent, options: { missingMedia?: string[] } = {}): Promise<void> {
    const kind = EVENT[event.type];
    const missing = kind === 'created' ? (options.missingMedia ?? []) : [];
    // A created event whose attachments have not all arrived waits up to FORWARD_MEDIA_WAIT_SECONDS
    // (attachmentsAdded makes it due as soon as the last one is stored).
    const waitSeconds = missing.length ? this.config.FORWARD_MEDIA_WAIT_SECONDS : 0;
    const rows = outboxRowsSql({ submissionId: '$2', formId: '$1', event: '$3::varchar', snapshot: snapshotSql('$2', '$4::jsonb'), due: 'now() + make_interval(secs => $5)' });
    // A fixed text: a named prepared statement, planned once per connection (database/prepared-query.ts).
    const [{ queued }] = (await preparedQueryIn(
      m,
      `WITH queued AS (${rows}) SELECT count(*)::int AS queued FROM queued`,
      [event.formId, event.submissionId, kind, JSON.stringify(missing), waitSeconds],
    )) as Array<{ queued: number }>;
    if (queued && !waitSeconds) this.due.add(m);
  }

  /**
   * The `created` rows of a new submission whose media are all there, written by the intake's
   * insert statement itself (SubmissionOutbox.createdRowsSql): one round trip for row and outbox.
   * Such a submission waits for no media, so its rows are due at once. They store no snapshot:
   * until the submission changes, the live row is the snapshot; the claim builds it from there,
   * and the first update of the submission before the send stores the submission as it was
   * (migration 1764950000000; docs/restservices.md, "Fidelity"). So the statement's attachment
   * rows (the port's `attached`) are not read here: the claim reads them once committed.
   */
  createdRowsSql(inserted: string): string {
    return outboxRowsSql({
      join: `CROSS JOIN ${inserted} ins`, submissionId: 'ins.id', formId: 'ins.form_id', event: `'created'::varchar`,
      snapshot: null, due: 'now()',
    });
  }

  createdRowsWritten(count: number): void {
    if (count) this.wakeSoon();
  }

  committed(m: EntityManager): void {
    if (!this.due.has(m)) return;
    this.due.delete(m);
    this.wakeSoon();
  }

  /** One NOTIFY for the commits of this process that happen while one is on its way. */
  private wakeSoon(): void {
    if (this.waking) {
      this.wakeAgain = true;
      return;
    }
    this.waking = (async () => {
      do {
        this.wakeAgain = false;
        // A lost wake-up costs latency only: the relay polls every FORWARD_RELAY_INTERVAL_MS.
        await this.wake().catch(() => undefined);
      } while (this.wakeAgain);
    })().finally(() => (this.waking = null));
  }

  /**
   * The created rows not yet attempted get the attachments now stored and the names still
   * missing; once none is missing they are due at once (and the relay is woken).
   */
  async attachmentsAdded(m: EntityManager, submissionId: number, missingMedia: string[]): Promise<void> {
    const [{ refreshed }] = (await m.query(
      `WITH refreshed AS (
         UPDATE rest_deliveries SET snapshot = snapshot || jsonb_build_object('attachments', ${attachmentsSql('$1')}, 'missing_media', $2::jsonb),
           next_attempt_at = CASE WHEN jsonb_array_length($2::jsonb) = 0 THEN now() ELSE next_attempt_at END, date_modified = now()
         WHERE submission_id = $1 AND event = 'created' AND status = 'pending' AND attempts = 0 AND snapshot IS NOT NULL
         RETURNING 1)
       SELECT count(*)::int AS refreshed FROM refreshed`,
      [submissionId, JSON.stringify(missingMedia)],
    )) as Array<{ refreshed: number }>;
    if (refreshed && !missingMedia.length) this.due.add(m);
  }

  /**
   * Wakes the worker's relay after rows were made due outside an outbox write (manual retry,
   * re-enable, an ordered successor), and after intake commits (wakeSoon). A prepared statement
   * on the pool, not TypeORM's query runner: under forwarded load the API sends one for about
   * every fourth submission.
   */
  async wake(): Promise<void> {
    await preparedQuery(this.ds, WAKE_SQL, []);
  }
}

/**
 * SQL: the outbox rows of one submission event, one per active service of the form whose
 * `events` take it (docs/restservices.md, "Events"). Both intake paths write it: `record` inside
 * the transaction, `createdRowsSql` as a CTE of the one-statement insert (`join` brings in the
 * new row). Each argument is an SQL expression.
 */
function outboxRowsSql(o: { join?: string; submissionId: string; formId: string; event: string; snapshot: string | null; due: string }): string {
  return `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, snapshot, next_attempt_at)
       SELECT gen_random_uuid(), rs.id, ${o.submissionId}, ${o.event}, ${o.snapshot === null ? 'NULL::jsonb' : snapshotForServiceSql(o.snapshot, 'rs.name')}, ${o.due}
       FROM rest_services rs ${o.join ?? ''}
       WHERE rs.form_id = ${o.formId} AND rs.active AND ${o.event} = ANY(rs.events)
       RETURNING 1`;
}
