import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DELIVERY_CHANNEL } from '../delivery/delivery-outbox.js';
import { entityColumns, entitySnapshotSql } from '../delivery/entity-outbox.js';
import { snapshotOfRowSql } from '../delivery/delivery-snapshot.js';
import { ReplayEntity, type ReplayFilters } from '../restservice.entities.js';

/** One WHERE clause for counting and for writing a replay's outbox rows ($1 form, $2 service, $3..$8 filters). */
const MATCHING = `s.form_id = $1 AND s.deleted_at IS NULL
  AND ($3::timestamptz IS NULL OR s.date_created >= $3::timestamptz)
  AND ($4::timestamptz IS NULL OR s.date_created < $4::timestamptz)
  AND ($5::int[] IS NULL OR s.id = ANY($5::int[]))
  AND (NOT $6::boolean OR s.id IN (
        SELECT submission_id FROM rest_deliveries WHERE service_id = $2 AND status = 'failed'
        EXCEPT SELECT submission_id FROM rest_deliveries WHERE service_id = $2 AND status = 'success'))
  AND s.id <= $7
  AND (NOT $8::boolean OR NOT EXISTS (SELECT 1 FROM sheets_rows r WHERE r.service_id = $2 AND r.submission_id = s.id))`;

function params(formId: number, serviceId: number, f: ReplayFilters, upto: number): unknown[] {
  return [formId, serviceId, f.submitted_after ?? null, f.submitted_before ?? null, f.submission_ids ?? null, f.only_failed ?? false, upto, f.missing_in_sheet ?? false];
}

/**
 * The same for the entities a replay sends ($1 form, $2 service, $3..$6 the filters as for
 * submissions: the entity's creation time, the submission that created it, a delivery to this
 * service that failed for good and none that succeeded; $7 the newest entity when asked): the
 * live entities of the lists the form uses (entity_list_forms), as the live entity events go
 * (delivery/entity-outbox.ts).
 */
const LISTS_OF_FORM = `SELECT lf.list_id FROM entity_list_forms lf WHERE lf.form_id = $1`;
const ENTITIES_MATCHING = `e.list_id IN (${LISTS_OF_FORM}) AND e.deleted_at IS NULL
  AND ($3::timestamptz IS NULL OR e.date_created >= $3::timestamptz)
  AND ($4::timestamptz IS NULL OR e.date_created < $4::timestamptz)
  AND ($5::int[] IS NULL OR e.creator_submission_id = ANY($5::int[]))
  AND (NOT $6::boolean OR e.id IN (
        SELECT entity_id FROM rest_deliveries WHERE service_id = $2 AND entity_id IS NOT NULL AND status = 'failed'
        EXCEPT SELECT entity_id FROM rest_deliveries WHERE service_id = $2 AND entity_id IS NOT NULL AND status = 'success'))
  AND e.id <= $7`;

function entityParams(formId: number, serviceId: number, f: ReplayFilters, entityUpto: number): unknown[] {
  return [formId, serviceId, f.submitted_after ?? null, f.submitted_before ?? null, f.submission_ids ?? null, f.only_failed ?? false, entityUpto];
}

export interface ReplayProgress {
  done: number;
  failed: number;
  open: number;
}

/** Queries of replays: matching submissions, their outbox rows, progress. */
@Injectable()
export class ReplaysRepository {
  constructor(@InjectRepository(ReplayEntity) private readonly replays: Repository<ReplayEntity>) {}

  async newestSubmissionId(formId: number): Promise<number> {
    const rows = (await this.replays.query(`SELECT COALESCE(max(id), 0) AS id FROM submissions WHERE form_id = $1`, [formId])) as Array<{ id: number }>;
    return Number(rows[0].id);
  }

  async formOfService(serviceId: number): Promise<number | null> {
    const rows = (await this.replays.query(`SELECT form_id FROM rest_services WHERE id = $1`, [serviceId])) as Array<{ form_id: number }>;
    return rows[0]?.form_id ?? null;
  }

  async countMatching(formId: number, serviceId: number, filters: ReplayFilters, upto: number): Promise<number> {
    const rows = (await this.replays.query(`SELECT count(*)::int AS n FROM submissions s WHERE ${MATCHING}`, params(formId, serviceId, filters, upto))) as Array<{ n: number }>;
    return rows[0].n;
  }

  /** The newest entity of the lists the form uses (0: none). */
  async newestEntityId(formId: number): Promise<number> {
    const rows = (await this.replays.query(
      `SELECT COALESCE(max(e.id), 0)::text AS id FROM entities e WHERE e.list_id IN (${LISTS_OF_FORM})`,
      [formId],
    )) as Array<{ id: string }>;
    return Number(rows[0].id);
  }

  async countEntitiesMatching(formId: number, serviceId: number, filters: ReplayFilters, entityUpto: number): Promise<number> {
    if (entityUpto <= 0) return 0;
    const rows = (await this.replays.query(`SELECT count(*)::int AS n FROM entities e WHERE ${ENTITIES_MATCHING}`, entityParams(formId, serviceId, filters, entityUpto))) as Array<{ n: number }>;
    return rows[0].n;
  }

  create(row: Partial<ReplayEntity>): Promise<ReplayEntity> {
    return this.replays.save(this.replays.create(row));
  }

  /**
   * Records a replay unless the service already has an open one, or its user `maxOpenPerUser`
   * (docs/security.md, "Rate limits, quotas and forwarding input"). Replays whose rows are all
   * written and final are closed first (their status is otherwise settled when read). Two
   * transaction-scoped advisory locks, user then service, make the check and the insert one
   * step for concurrent requests.
   */
  async createExclusive(row: Partial<ReplayEntity> & { serviceId: number }, maxOpenPerUser: number): Promise<ReplayEntity | { refused: 'service' | 'user' }> {
    return this.replays.manager.transaction(async (m) => {
      const user = row.createdBy ?? null;
      if (user !== null) await m.query(`SELECT pg_advisory_xact_lock(hashtext('rest_replays:user'), $1)`, [user]);
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('rest_replays:service'), $1)`, [row.serviceId]);
      await m.query(
        `UPDATE rest_replays r SET status = 'done', finished_at = now(),
           done = (SELECT count(*) FILTER (WHERE d.status IN ('success', 'skipped'))::int FROM rest_deliveries d WHERE d.replay_id = r.id),
           failed = (SELECT count(*) FILTER (WHERE d.status = 'failed')::int FROM rest_deliveries d WHERE d.replay_id = r.id)
         WHERE (r.service_id = $1 OR r.created_by = $2) AND r.status = 'running' AND r.written
           AND NOT EXISTS (SELECT 1 FROM rest_deliveries d WHERE d.replay_id = r.id AND d.status NOT IN ('success', 'skipped', 'failed'))`,
        [row.serviceId, user],
      );
      const [open] = (await m.query(
        `SELECT count(*) FILTER (WHERE service_id = $1)::int AS service, count(*) FILTER (WHERE created_by = $2)::int AS "user"
         FROM rest_replays WHERE (service_id = $1 OR created_by = $2) AND status IN ('queued', 'running')`,
        [row.serviceId, user],
      )) as Array<{ service: number; user: number }>;
      if (open.service > 0) return { refused: 'service' as const };
      if (user !== null && open.user >= maxOpenPerUser) return { refused: 'user' as const };
      return m.save(m.create(ReplayEntity, row));
    });
  }

  find(serviceId: number, id: number): Promise<ReplayEntity | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return Promise.resolve(null);
    return this.replays.findOneBy({ id, serviceId });
  }

  findById(id: number): Promise<ReplayEntity | null> {
    return this.replays.findOneBy({ id });
  }

  /**
   * Writes the next `limit` outbox rows of a replay (`created` events, due now, each with the
   * snapshot of its submission as the intake's outbox statement writes it: every attempt sends
   * the same bytes) past its cursor, and moves the cursor, in one statement; how many were
   * written. Nothing is written once the replay is cancelled, or once the service stopped
   * taking `created` events (docs/restservices.md, "Replay / back-fill").
   */
  async writeBatch(replay: ReplayEntity, formId: number, limit: number): Promise<number> {
    return this.writeRows(replay.id, 'cursor', (cursor) => [
      `INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, replay_id, snapshot)
       SELECT gen_random_uuid(), $2, s.id, 'created', $11, ${snapshotOfRowSql('s', `'[]'::jsonb`)} FROM submissions s
       WHERE ${MATCHING} AND s.id > $9 AND EXISTS (SELECT 1 FROM rest_services r WHERE r.id = $2 AND 'created' = ANY(r.events))
       ORDER BY s.id LIMIT $10
       RETURNING submission_id AS subject`,
      [...params(formId, replay.serviceId, replay.filters, replay.upto), cursor, limit, replay.id],
    ]);
  }

  /**
   * `writeBatch` for the entities of a replay (after its submissions): the next `limit` live
   * entities past its entity cursor, each an `entity_created` row whose snapshot is the entity
   * as it is now (its current version), in the shape of the live entity events
   * (delivery/entity-outbox.ts). Nothing once the replay is cancelled, or once the service
   * stopped taking `entity_created`.
   */
  async writeEntityBatch(replay: ReplayEntity, formId: number, limit: number): Promise<number> {
    if (replay.entityUpto <= 0) return 0;
    return this.writeRows(replay.id, 'entity_cursor', (cursor) => [
      `INSERT INTO rest_deliveries (delivery_id, service_id, entity_id, event, replay_id, snapshot, next_attempt_at)
       SELECT gen_random_uuid(), $2, e.id, 'entity_created', $10, ${entitySnapshotSql('l.name', entityColumns('e'))}, now()
       FROM entities e JOIN entity_lists l ON l.id = e.list_id
       WHERE ${ENTITIES_MATCHING} AND e.id > $8 AND EXISTS (SELECT 1 FROM rest_services r WHERE r.id = $2 AND 'entity_created' = ANY(r.events))
       ORDER BY e.id LIMIT $9
       RETURNING entity_id AS subject`,
      [...entityParams(formId, replay.serviceId, replay.filters, replay.entityUpto), cursor, limit, replay.id],
    ]);
  }

  /**
   * One batch of a replay's outbox rows in one short transaction: the replay's row locked (which
   * orders this against a cancel: no row is written after it) and its cursor read, `insert`'s
   * rows written past it (its last parameter is the replay's id; it returns each row's `subject`
   * id) and the cursor moved to the last, in one statement; the relay NOTIFYed at commit. How many were written.
   */
  private writeRows(replayId: number, cursor: 'cursor' | 'entity_cursor', insert: (cursor: string) => [string, unknown[]]): Promise<number> {
    return this.replays.manager.transaction(async (m) => {
      const [live] = (await m.query(`SELECT ${cursor}::text AS at FROM rest_replays WHERE id = $1 AND status IN ('queued', 'running') FOR UPDATE`, [replayId])) as Array<{ at: string }>;
      if (!live) return 0;
      const [sql, values] = insert(live.at);
      const rows = (await m.query(
        `WITH written AS (${sql})
         UPDATE rest_replays SET ${cursor} = COALESCE((SELECT max(subject) FROM written), ${cursor}), status = 'running'
         WHERE id = $${values.length}
         RETURNING (SELECT count(*)::int FROM written) AS n`,
        values,
      )) as [Array<{ n: number }>, number];
      const n = rows[0][0]?.n ?? 0;
      // The relay LISTENs: the rows are claimed as soon as this commits.
      if (n) await m.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
      return n;
    });
  }

  /** All rows written: `total` becomes what was written (submissions and entities deleted meanwhile drop out). */
  async markWritten(id: number): Promise<void> {
    await this.replays.query(
      `UPDATE rest_replays SET written = true, total = (SELECT count(*)::int FROM rest_deliveries WHERE replay_id = $1) WHERE id = $1 AND status IN ('queued', 'running')`,
      [id],
    );
  }

  async progress(id: number): Promise<ReplayProgress> {
    const rows = (await this.replays.query(
      `SELECT count(*) FILTER (WHERE status IN ('success', 'skipped'))::int AS done, count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status NOT IN ('success', 'skipped', 'failed'))::int AS open
       FROM rest_deliveries WHERE replay_id = $1`,
      [id],
    )) as Array<ReplayProgress>;
    return rows[0];
  }

  /** Ends a running replay whose rows are all written and final, with its counts frozen. */
  async finish(id: number, done: number, failed: number): Promise<void> {
    await this.replays.query(`UPDATE rest_replays SET status = 'done', done = $2, failed = $3, finished_at = now() WHERE id = $1 AND status = 'running' AND written`, [id, done, failed]);
  }

  /**
   * Cancel: no further rows are written and the ones not sent yet are dropped (rows being sent
   * right now finish); the counts are frozen. False when the replay had already ended.
   */
  async cancel(id: number): Promise<boolean> {
    return this.replays.manager.transaction(async (m) => {
      const [rows] = (await m.query(`UPDATE rest_replays SET status = 'cancelled', finished_at = now() WHERE id = $1 AND status IN ('queued', 'running') RETURNING id`, [id])) as [unknown[], number];
      if (!rows.length) return false;
      // A queued row's job then finds nothing to claim; a row being sent finishes.
      await m.query(`DELETE FROM rest_deliveries WHERE replay_id = $1 AND status IN ('pending', 'retrying') AND lease_until IS NULL`, [id]);
      await m.query(
        `UPDATE rest_replays SET done = p.done, failed = p.failed FROM (
           SELECT count(*) FILTER (WHERE status IN ('success', 'skipped'))::int AS done, count(*) FILTER (WHERE status = 'failed')::int AS failed FROM rest_deliveries WHERE replay_id = $1) p
         WHERE id = $1`,
        [id],
      );
      return true;
    });
  }

  /**
   * Rows of a replay cancelled in the last day that a worker put back after the cancel (it
   * held them while the cancel ran): dropped before they are due.
   */
  async purgeCancelled(): Promise<number> {
    const [, n] = (await this.replays.query(
      `DELETE FROM rest_deliveries d USING rest_replays r
       WHERE d.replay_id = r.id AND r.status = 'cancelled' AND r.finished_at > now() - interval '1 day' AND d.status IN ('pending', 'retrying') AND d.lease_until IS NULL`,
    )) as [unknown, number];
    return n;
  }

  /** Replays whose outbox rows are not all written (a lost job, a restarted worker). */
  async unwritten(): Promise<number[]> {
    const rows = (await this.replays.query(`SELECT id FROM rest_replays WHERE NOT written AND status IN ('queued', 'running') ORDER BY id LIMIT 100`)) as Array<{ id: number }>;
    return rows.map((r) => r.id);
  }
}
