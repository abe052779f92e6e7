import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { preparedQueryIn } from '../../database/prepared-query.js';
import { returned } from '../records/entities.repository.js';
import type { EntityItem } from './entity-item.js';

export interface HeldUpdate {
  id: number;
  submission_id: number;
  item: EntityItem;
}

/**
 * Queries on `entity_held_updates` (docs/entities.md "Held updates") and the one write intake
 * makes on a stored submission: its `_entity_errors`.
 */
@Injectable()
export class HeldUpdatesRepository {
  /**
   * Holds an update, and counts it on its list (`held_seq`) in the same transaction: intake's one
   * statement learns from that count whether a hold committed after its snapshot
   * (docs/entities.md, "Intake: one statement").
   */
  async hold(m: EntityManager, listId: number, submissionId: number, item: EntityItem): Promise<void> {
    await m.query(
      `WITH held AS (
         INSERT INTO entity_held_updates (list_id, submission_id, entity_uuid, branch_id, branch_base_version, item) VALUES ($1, $2, $3, $4, $5, $6)
       )
       UPDATE entity_lists SET held_seq = held_seq + 1 WHERE id = $1`,
      [listId, submissionId, item.uuid, item.branchId, item.baseVersion, JSON.stringify(item)],
    );
  }

  async countHeld(m: EntityManager, listId: number): Promise<number> {
    const rows: Array<{ n: number }> = await m.query(`SELECT count(*)::int AS n FROM entity_held_updates WHERE list_id = $1`, [listId]);
    return rows[0]!.n;
  }

  async isHeld(m: EntityManager, submissionId: number): Promise<boolean> {
    return (await preparedQueryIn(m, `SELECT 1 FROM entity_held_updates WHERE submission_id = $1 LIMIT 1`, [submissionId])).length > 0;
  }

  /**
   * The held update that follows a version: in the same branch from branch version
   * `branchBaseVersion`; after a version outside any branch (an offline create arrives without
   * a branch id), the branch update that starts from version 1. Taken out of the hold.
   */
  async takeNext(m: EntityManager, listId: number, uuid: string, branchId: string | null, branchBaseVersion: number): Promise<HeldUpdate | null> {
    // A fixed text run after every entity version intake makes: a prepared statement (database/prepared-query.ts).
    const rows = await preparedQueryIn<HeldUpdate>(
      m,
      `DELETE FROM entity_held_updates WHERE id = (
         SELECT id FROM entity_held_updates WHERE list_id = $1 AND entity_uuid = $2 AND branch_base_version = $3 AND ($4::uuid IS NULL OR branch_id = $4)
         ORDER BY id LIMIT 1 FOR UPDATE)
       RETURNING id::float8 AS id, submission_id, item`,
      [listId, uuid, branchId === null ? 1 : branchBaseVersion, branchId],
    );
    return rows[0] ?? null;
  }

  /** Held updates of the list older than `days` days, taken out of the hold (the time bound). */
  async takeExpired(m: EntityManager, listId: number, days: number): Promise<HeldUpdate[]> {
    return returned(await m.query(
      `DELETE FROM entity_held_updates WHERE id IN (
         SELECT id FROM entity_held_updates WHERE list_id = $1 AND held_at < now() - make_interval(days => $2) ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED)
       RETURNING id::float8 AS id, submission_id, item`,
      [listId, days],
    ));
  }

  /**
   * The submission's `_entity_errors` (docs/entities.md "Errors"): set to `errors`, or removed
   * when there are none. Stored with its answers, so every reader of the data API shows them.
   */
  async setSubmissionErrors(m: EntityManager, submissionId: number, errors: Array<{ list: string; uuid: string; error: string }>): Promise<void> {
    if (errors.length) {
      await m.query(`UPDATE submissions SET json = json || jsonb_build_object('_entity_errors', $2::jsonb) WHERE id = $1`, [submissionId, JSON.stringify(errors)]);
    } else {
      await m.query(`UPDATE submissions SET json = json - '_entity_errors' WHERE id = $1 AND json ? '_entity_errors'`, [submissionId]);
    }
  }

  /** Adds errors to those the submission has (a held update that could not be applied later). */
  async addSubmissionErrors(m: EntityManager, submissionId: number, errors: Array<{ list: string; uuid: string; error: string }>): Promise<void> {
    await m.query(
      `UPDATE submissions SET json = json || jsonb_build_object('_entity_errors', COALESCE(json -> '_entity_errors', '[]'::jsonb) || $2::jsonb) WHERE id = $1`,
      [submissionId, JSON.stringify(errors)],
    );
  }
}
