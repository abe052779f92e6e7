import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedQueryIn } from '../../database/prepared-query.js';

export type Conflict = 'soft' | 'hard' | null;
export type EntityData = Record<string, string>;

export interface EntityRow {
  id: number;
  list_id: number;
  uuid: string;
  label: string;
  data: EntityData;
  version: number;
  conflict: Conflict;
  creator_submission_id: number | null;
  creator_id: number | null;
  date_created: Date;
  date_modified: Date;
  deleted_at: Date | null;
  /** Set by the statements of intake that make a version: whether updates are held for this entity (docs/entities.md "Held updates"). */
  held_waiting?: boolean;
}

export interface EntityVersionRow {
  version: number;
  label: string;
  data: EntityData;
  branch_id: string | null;
  branch_base_version: number | null;
}

/** What one version records (entity_versions); the entity row takes `label`, `data`, `version`, `conflict` from it. */
export interface NewVersion {
  version: number;
  label: string;
  data: EntityData;
  dataReceived: EntityData;
  baseVersion: number | null;
  trunkVersion: number | null;
  branchId: string | null;
  branchBaseVersion: number | null;
  conflict: Conflict;
  conflictingProperties: string[] | null;
  source: 'submission' | 'api';
  submissionId: number | null;
  creatorId: number | null;
}

type Query = Pick<EntityManager, 'query'>;

const ENTITY_COLUMNS = `e.id::float8 AS id, e.list_id, e.uuid::text AS uuid, e.label, e.data, e.version, e.conflict, e.creator_submission_id, e.creator_id,
  e.date_created, e.date_modified, e.deleted_at`;

// The fixed statements of intake run as named prepared statements (database/prepared-query.ts):
// planned once per connection, not on every submission (docs/entities.md "Submissions").
const FIND_BY_UUID_FOR_UPDATE_SQL = `SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.list_id = $1 AND e.uuid = $2 FOR UPDATE`;
const HELD_WAITING = `EXISTS (SELECT 1 FROM entity_held_updates h WHERE h.list_id = e.list_id AND h.entity_uuid = e.uuid) AS held_waiting`;
const ADD_VERSION_SQL = `UPDATE entities AS e SET label = $2, data = $3, version = $4, conflict = $5, date_modified = clock_timestamp() WHERE e.id = $1
  RETURNING ${ENTITY_COLUMNS}, ${HELD_WAITING}`;
/** The entity and its version 1: the version is written only when the entity was (no row: the uuid is taken). */
const CREATE_SQL = `WITH e AS (
    INSERT INTO entities AS e (list_id, uuid, label, data, version, conflict, creator_submission_id, creator_id)
    VALUES ($1, $2, $3, $4, 1, NULL, $5, $6) ON CONFLICT (list_id, uuid) DO NOTHING RETURNING ${ENTITY_COLUMNS}),
  v AS (
    INSERT INTO entity_versions (entity_id, version, label, data, data_received, base_version, trunk_version, branch_id, branch_base_version,
      conflict, conflicting_properties, source, submission_id, creator_id)
    SELECT e.id::bigint, 1, $3, $4, $7::jsonb, $8::int, $9::int, $10::uuid, $11::int, $12::varchar, $13::text[], $14::varchar, $5, $6 FROM e)
  SELECT e.*, EXISTS (SELECT 1 FROM entity_held_updates h WHERE h.list_id = $1 AND h.entity_uuid = $2) AS held_waiting FROM e`;

/**
 * The rows of an `UPDATE`/`DELETE ... RETURNING` through EntityManager.query, which answers those
 * as `[rows, count]` (and an `INSERT`/`SELECT` as the rows).
 */
export function returned<T>(result: unknown): T[] {
  return (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number' ? result[0] : result) as T[];
}

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Queries on `entities` and `entity_versions` (docs/entities.md "The model"). Write paths take the transaction's EntityManager. */
@Injectable()
export class EntitiesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * One page of the list's live (or only deleted) entities by id. `search`: a case-insensitive
   * substring of the label or of any value, matched literally (ILIKE with the pattern characters
   * escaped: linear in the row, no user regular expression).
   */
  async page(listId: number, options: { deleted: boolean; search?: string; offset: number; limit: number }): Promise<{ rows: EntityRow[]; total: number }> {
    const params: unknown[] = [listId];
    let where = `e.list_id = $1 AND e.deleted_at IS ${options.deleted ? 'NOT ' : ''}NULL`;
    if (options.search) {
      params.push(likePattern(options.search));
      where += ` AND (e.label ILIKE $2 OR EXISTS (SELECT 1 FROM jsonb_each_text(e.data) v WHERE v.value ILIKE $2))`;
    }
    const n = params.length;
    const rows: Array<EntityRow & { total?: string }> = await this.db.query(
      `SELECT ${ENTITY_COLUMNS}, count(*) OVER () AS total FROM entities e WHERE ${where} ORDER BY e.id LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...params, options.limit, options.offset],
    );
    let total = rows.length ? Number(rows[0]!.total) : 0;
    if (!rows.length && options.offset) {
      const counted: Array<{ n: number }> = await this.db.query(`SELECT count(*)::int AS n FROM entities e WHERE ${where}`, params);
      total = counted[0]!.n;
    }
    for (const r of rows) delete r.total;
    return { rows, total };
  }

  async find(listId: number, id: number, deleted = false, q: Query = this.db): Promise<EntityRow | null> {
    if (!Number.isSafeInteger(id) || id <= 0) return null;
    const rows: EntityRow[] = await q.query(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.list_id = $1 AND e.id = $2 AND e.deleted_at IS ${deleted ? 'NOT ' : ''}NULL`, [listId, id]);
    return rows[0] ?? null;
  }

  /**
   * Serialises every change of one entity (by uuid, existing or not yet) until the transaction
   * ends: an offline update and the create it follows may arrive at the same time.
   */
  async lock(m: EntityManager, listId: number, uuid: string): Promise<void> {
    await preparedQueryIn(m, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, [listId, uuid]);
  }

  /** The entity with that uuid, deleted ones included, locked for the transaction. */
  async findByUuidForUpdate(m: EntityManager, listId: number, uuid: string): Promise<EntityRow | null> {
    const rows = await preparedQueryIn<EntityRow>(m, FIND_BY_UUID_FOR_UPDATE_SQL, [listId, uuid]);
    return rows[0] ?? null;
  }

  async findForUpdate(m: EntityManager, listId: number, id: number): Promise<EntityRow | null> {
    const rows: EntityRow[] = await m.query(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.list_id = $1 AND e.id = $2 AND e.deleted_at IS NULL FOR UPDATE`, [listId, id]);
    return rows[0] ?? null;
  }

  /** A new entity and its version 1, in one statement; null when the list has that uuid already (deleted ones too). */
  async create(m: EntityManager, listId: number, uuid: string, v: NewVersion): Promise<EntityRow | null> {
    const rows = await preparedQueryIn<EntityRow>(m, CREATE_SQL, [
      listId, uuid, v.label, v.data, v.submissionId, v.creatorId, v.dataReceived, v.baseVersion, v.trunkVersion, v.branchId, v.branchBaseVersion,
      v.conflict, v.conflictingProperties, v.source,
    ]);
    return rows[0] ?? null;
  }

  /** Which of these uuids the list has (deleted entities included). */
  async existingUuids(m: EntityManager, listId: number, uuids: string[]): Promise<string[]> {
    const rows: Array<{ uuid: string }> = await m.query(`SELECT uuid::text AS uuid FROM entities WHERE list_id = $1 AND uuid = ANY($2::uuid[])`, [listId, uuids]);
    return rows.map((r) => r.uuid);
  }

  /** Many new entities and their first versions in two statements (the caller checked the uuids are free). */
  async createMany(m: EntityManager, listId: number, items: Array<{ uuid: string; label: string; data: EntityData }>, creatorId: number | null): Promise<Array<{ id: number; uuid: string }>> {
    const rows: Array<{ id: number; uuid: string }> = await m.query(
      `INSERT INTO entities (list_id, uuid, label, data, creator_id)
       SELECT $1, x.uuid, x.label, x.data, $3 FROM jsonb_to_recordset($2::jsonb) AS x(uuid uuid, label text, data jsonb)
       RETURNING id::float8 AS id, uuid::text AS uuid`,
      [listId, JSON.stringify(items), creatorId],
    );
    await m.query(
      `INSERT INTO entity_versions (entity_id, version, label, data, data_received, source, creator_id)
       SELECT e.id, 1, e.label, e.data, e.data, 'api', e.creator_id FROM entities e WHERE e.id = ANY($1::bigint[])`,
      [rows.map((r) => r.id)],
    );
    return rows;
  }

  /** A new current version of an existing entity (label, data and version follow it); the entity's conflict becomes `entityConflict`. */
  async addVersion(m: EntityManager, entityId: number, v: NewVersion, entityConflict: Conflict): Promise<EntityRow> {
    const rows = await preparedQueryIn<EntityRow>(m, ADD_VERSION_SQL, [entityId, v.label, v.data, v.version, entityConflict]);
    await this.insertVersion(m, entityId, v);
    return rows[0]!;
  }

  private async insertVersion(m: EntityManager, entityId: number, v: NewVersion): Promise<void> {
    await preparedQueryIn(
      m,
      `INSERT INTO entity_versions (entity_id, version, label, data, data_received, base_version, trunk_version, branch_id, branch_base_version,
         conflict, conflicting_properties, source, submission_id, creator_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [entityId, v.version, v.label, v.data, v.dataReceived, v.baseVersion, v.trunkVersion, v.branchId, v.branchBaseVersion, v.conflict, v.conflictingProperties, v.source, v.submissionId, v.creatorId],
    );
  }

  /** The entity's conflict cleared (or set) without a new version. */
  async setConflict(m: EntityManager, entityId: number, conflict: Conflict): Promise<EntityRow> {
    const rows = returned<EntityRow>(await m.query(`UPDATE entities AS e SET conflict = $2, date_modified = clock_timestamp() WHERE e.id = $1 RETURNING ${ENTITY_COLUMNS}`, [entityId, conflict]));
    return rows[0]!;
  }

  async versionAt(m: EntityManager, entityId: number, version: number): Promise<EntityVersionRow | null> {
    const rows = await preparedQueryIn<EntityVersionRow>(
      m,
      `SELECT version, label, data, branch_id::text AS branch_id, branch_base_version FROM entity_versions WHERE entity_id = $1 AND version = $2`,
      [entityId, version],
    );
    return rows[0] ?? null;
  }

  /** The version an offline branch made from its own version `branchBaseVersion` (docs/entities.md "Offline branches"). */
  async branchVersion(m: Query, entityId: number, branchId: string, branchBaseVersion: number): Promise<EntityVersionRow | null> {
    const rows: EntityVersionRow[] = await m.query(
      `SELECT version, label, data, branch_id::text AS branch_id, branch_base_version FROM entity_versions
       WHERE entity_id = $1 AND branch_id = $2 AND branch_base_version = $3 ORDER BY version DESC LIMIT 1`,
      [entityId, branchId, branchBaseVersion],
    );
    return rows[0] ?? null;
  }

  /** A version above `after` made outside the branch: the branch was interrupted. */
  async interrupted(m: Query, entityId: number, branchId: string, after: number): Promise<boolean> {
    const rows = await m.query(`SELECT 1 FROM entity_versions WHERE entity_id = $1 AND branch_id IS DISTINCT FROM $2 AND version > $3 LIMIT 1`, [entityId, branchId, after]);
    return rows.length > 0;
  }

  /** Whether a version of any entity came from this submission (a submission acts on entities once, edits included). */
  async submissionActed(m: EntityManager, submissionId: number): Promise<boolean> {
    const rows = await preparedQueryIn(m, `SELECT 1 FROM entity_versions WHERE submission_id = $1 LIMIT 1`, [submissionId]);
    return rows.length > 0;
  }

  /** Soft delete of live entities of the list among `ids`; the deleted ones. */
  async softDelete(m: EntityManager, listId: number, ids: number[]): Promise<Array<{ id: number; uuid: string; version: number }>> {
    return returned(await m.query(
      `UPDATE entities SET deleted_at = clock_timestamp(), date_modified = clock_timestamp()
       WHERE list_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL RETURNING id::float8 AS id, uuid::text AS uuid, version`,
      [listId, ids],
    ));
  }
}
