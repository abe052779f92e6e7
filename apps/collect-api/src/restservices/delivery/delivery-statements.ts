import { liveSnapshotSql } from './delivery-snapshot.js';

/*
 * The outbox's hot statements and the SQL pieces they share: the worker's claim and its attempt
 * write (docs/restservices.md, "Connections and batches (the worker's hot path)"). The
 * repository (restservices.repository.ts) runs them; their plans are tested on their own.
 */

/** Open rows; `sending` is what a worker before migration 1764940000000 set while it sent (a rolling update). */
export const OPEN = `('pending', 'retrying', 'sending')`;

/**
 * What a claim returns of each row it took (`d`): the row with its snapshot (built here from the
 * live submission when none is stored: a new submission's `created` row until the submission
 * changes, migration 1764950000000, and rows from before snapshots), whether the submission (or its form)
 * is gone, soft or hard deleted, the service's `date_modified` (null: deleted), and whether a
 * later event of the same submission waits for this service (to wake the relay when this ends).
 * Scalar subqueries probed per row, not `NOT EXISTS`: in the generic plan of a prepared claim
 * PostgreSQL may turn an EXISTS into a hash of every live submission.
 */
export const CLAIMED = `d.id, d.delivery_id, d.service_id, d.submission_id, d.entity_id, d.event, d.attempts, d.attempt_base, d.body, d.replay_id,
  COALESCE(d.snapshot, CASE WHEN d.event <> 'deleted' THEN ${liveSnapshotSql('d.submission_id', '(SELECT r.name FROM rest_services r WHERE r.id = d.service_id)')} END) AS snapshot,
  d.entity_id IS NULL AND COALESCE((SELECT s.deleted_at IS NOT NULL OR f.deleted_at IS NOT NULL FROM submissions s JOIN forms f ON f.id = s.form_id WHERE s.id = d.submission_id), true) AS submission_gone,
  (SELECT r.date_modified::text FROM rest_services r WHERE r.id = d.service_id) AS service_version,
  EXISTS (SELECT 1 FROM rest_deliveries n WHERE n.submission_id = d.submission_id AND n.service_id = d.service_id AND n.id > d.id AND n.status IN ${OPEN})
    OR EXISTS (SELECT 1 FROM rest_deliveries n WHERE n.entity_id = d.entity_id AND n.service_id = d.service_id AND n.id > d.id AND n.entity_id IS NOT NULL AND n.status IN ${OPEN}) AS has_successor`;

/**
 * Due rows a claim looks at beyond the ones it wants: room for rows held back by an earlier
 * event of their submission (sent first) or by their replay's head, which become due as
 * those finish.
 */
export const CANDIDATES = 100;

/**
 * The lease of a claimed row: `lease_until` only. A claim changes no column that an index of
 * rest_deliveries names (key or predicate: `status`, `next_attempt_at`, `date_modified` stay), so
 * PostgreSQL updates the row in place (HOT: no new index entries, a short WAL record) on a page
 * with room (fillfactor 80, migration 1764940000000). A row is being sent while its lease runs
 * (`lease_until IS NOT NULL`, status still `pending` or `retrying`); one whose worker died is
 * claimable again once the lease has passed (CLAIMABLE). docs/restservices.md, "Delivery model";
 * docs/restservices.md, "Connections and batches (the worker's hot path)".
 */
export const LEASE = (ms: string) => `lease_until = now() + (${ms} || ' milliseconds')::interval`;

/** Not leased, or its lease has passed (a worker killed mid-send). */
export const CLAIMABLE = (row: string) => `(${row}.lease_until IS NULL OR ${row}.lease_until <= now())`;

/**
 * Finished rows (the predicate of rest_deliveries_finished_idx, which pruneFinished walks). The
 * claim re-checks a candidate it locks (`c`) as "not finished" rather than "open": the same rows (a row is one or the other), but a condition that does not imply the
 * open rows' partial indexes, so the row is fetched by its primary key and never by a walk of
 * the open index (CLAIM_PLANNER).
 */
export const FINISHED = `('success', 'failed', 'skipped')`;

/**
 * The planner settings of the connection the worker claims on (a pool of one, claimDue). The
 * claim must walk the open rows' index in `next_attempt_at` order and stop after its top-N: a
 * prepared statement keeps the generic plan made on its first executions, and one made while
 * rest_deliveries was small read the open index as a bitmap, every entry of it (the dead ones
 * of finished rows too, which only a plain index scan marks and then skips), visited each row's
 * page and sorted them, on every claim however large the index had grown (10 ms and 570 buffer
 * hits per claim of 2 rows over 1,100 entries in the forwarding-cost bench;
 * docs/restservices.md, "Connections and batches (the worker's hot path)"). With bitmap scans, sequential scans
 * and sorts off, the only plan left is the one the statement was written for.
 */
export const CLAIM_PLANNER = '-c enable_bitmapscan=off -c enable_seqscan=off -c enable_sort=off';

/**
 * The claim (claimDue; $1 the rows wanted, $2 the lease in ms, $3 FORWARD_MAX_ATTEMPTS). Exported
 * for its tests (the update is in place; its plan). A row whose attempts are spent (an earlier
 * claim's send ended without recording its attempt: the worker died or the send threw) is taken
 * with `exhausted` and its count left as it is: the worker closes it as failed without sending
 * (docs/restservices.md, "Delivery model"), so no row is sent past its attempt limit. A row
 * waits for the earlier open rows of its submission, or of its entity (docs/entities.md, "Entity
 * events to rest services"), for the same service.
 */
export const CLAIM_SQL = `WITH claim AS (
    SELECT c.id, c.attempts >= c.attempt_base + $3::int AS exhausted
    FROM (SELECT id, next_attempt_at, submission_id, entity_id, service_id, replay_id FROM rest_deliveries
     WHERE status IN ${OPEN} AND next_attempt_at <= now() AND ${CLAIMABLE('rest_deliveries')} ORDER BY next_attempt_at LIMIT $1 + ${CANDIDATES}) o
    JOIN rest_deliveries c ON c.id = o.id
    WHERE c.status NOT IN ${FINISHED} AND c.next_attempt_at <= now() AND ${CLAIMABLE('c')}
      AND (SELECT 1 FROM rest_deliveries e WHERE e.submission_id = o.submission_id AND e.service_id = o.service_id AND e.id < o.id
        AND e.status IN ${OPEN} LIMIT 1) IS NULL
      AND (SELECT 1 FROM rest_deliveries e WHERE e.entity_id = o.entity_id AND e.service_id = o.service_id AND e.id < o.id
        AND e.entity_id IS NOT NULL AND e.status IN ${OPEN} LIMIT 1) IS NULL
      AND NOT (o.replay_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM rest_services r WHERE r.id = o.service_id AND r.name = 'spreadsheet')
        AND EXISTS (SELECT 1 FROM rest_deliveries e WHERE e.replay_id = o.replay_id AND e.id < o.id AND e.status IN ${OPEN}))
    ORDER BY o.next_attempt_at LIMIT $1 FOR UPDATE OF c SKIP LOCKED)
  UPDATE rest_deliveries d SET attempts = CASE WHEN claim.exhausted THEN d.attempts ELSE d.attempts + 1 END, ${LEASE('$2')}
  FROM claim WHERE d.id = claim.id
  RETURNING ${CLAIMED}, claim.exhausted`;

/**
 * The attempt write (recordAttempts). The rows it moves are found through the primary key
 * (`d.id = ANY($1)`) and not only by the join with the input: a prepared statement keeps the
 * generic plan it made on its first executions, and one made while rest_deliveries was small
 * joined by reading the whole table, in every call after, however large the table had grown
 * (316 µs of PostgreSQL CPU per forwarded submission in the forwarding-cost bench, a third of its
 * server's; docs/restservices.md, "Connections and batches (the worker's hot path)"). Exported for the plan's test.
 * Log entries are written for the rows `moved` updated only: the log has no foreign key to
 * rest_deliveries (its check was one more SPI statement per entry; migration 1764920000200), and
 * the UPDATE's row lock keeps a concurrent delete of the delivery (and its trigger that deletes
 * the entries) after this commit. An entry of a delivery deleted meanwhile is dropped, not an
 * error that failed the whole batch.
 */
export const ATTEMPT_WRITE_SQL = `WITH input AS (
         SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::varchar[], $5::int[], $6::int[], $7::text[], $8::text[], $9::varchar[], $10::timestamptz[])
           WITH ORDINALITY AS t(row_id, service_id, attempt, status, status_code, latency_ms, error, response_excerpt, event, retry_at, ord)),
       moved AS (
         UPDATE rest_deliveries d SET status = i.status, next_attempt_at = COALESCE(i.retry_at, d.next_attempt_at), lease_until = NULL, date_modified = now()
         FROM input i WHERE d.id = i.row_id AND d.id = ANY($1::bigint[])
         RETURNING d.id),
       logged AS (
         INSERT INTO rest_delivery_attempts (delivery_row_id, service_id, attempt, status, status_code, latency_ms, error, response_excerpt, event)
         SELECT i.row_id, i.service_id, i.attempt, i.status, i.status_code, i.latency_ms, i.error, i.response_excerpt, i.event FROM input i JOIN moved m ON m.id = i.row_id ORDER BY i.ord),
       health AS (
         SELECT service_id, (array_agg(status ORDER BY ord DESC))[1] AS last_status, max(ord) FILTER (WHERE status = 'success') AS last_success,
                count(*) FILTER (WHERE status = 'failed') AS failed
         FROM input WHERE status <> 'skipped' GROUP BY service_id)
       UPDATE rest_services s SET last_delivery_at = now(), last_status = h.last_status,
         failure_count = CASE WHEN h.last_success IS NULL THEN s.failure_count + h.failed
           ELSE (SELECT count(*) FROM input i WHERE i.service_id = h.service_id AND i.status = 'failed' AND i.ord > h.last_success) END
       FROM health h WHERE s.id = h.service_id`;
