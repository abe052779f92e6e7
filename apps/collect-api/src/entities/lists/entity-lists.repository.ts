import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedQuery, preparedQueryIn } from '../../database/prepared-query.js';
import { roleRank, type FormRole } from '../../forms/roles.js';

export interface EntityListRow {
  id: number;
  owner_id: number;
  owner: string;
  name: string;
  properties: string[];
  revision: string;
  date_created: Date;
  date_modified: Date;
}

export interface EntityListCounts {
  num_registration_forms: number;
  num_follow_up_forms: number;
  num_entities: number;
}

export interface ListFormRow {
  form_id: number;
  title: string;
  id_string: string;
  actions: string[];
  save_to: string[];
}

type Query = Pick<EntityManager, 'query'>;

const LIST_COLUMNS = `l.id, l.owner_id, u.username AS owner, l.name, l.properties, l.revision::text AS revision, l.date_created, l.date_modified`;
const FIND_BY_NAME_SQL = `SELECT ${LIST_COLUMNS} FROM entity_lists l JOIN users u ON u.id = l.owner_id WHERE l.owner_id = $1 AND l.name = $2`;

/** Queries on `entity_lists` and `entity_list_forms` (docs/entities.md "The model"). */
@Injectable()
export class EntityListsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async find(id: number, q: Query = this.db): Promise<EntityListRow | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return null;
    const rows: EntityListRow[] = await q.query(`SELECT ${LIST_COLUMNS} FROM entity_lists l JOIN users u ON u.id = l.owner_id WHERE l.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** A fixed text (intake runs it for every submission with entities): a prepared statement. */
  async findByName(ownerId: number, name: string, m?: EntityManager): Promise<EntityListRow | null> {
    const rows = m ? await preparedQueryIn<EntityListRow>(m, FIND_BY_NAME_SQL, [ownerId, name]) : await preparedQuery<EntityListRow>(this.db, FIND_BY_NAME_SQL, [ownerId, name]);
    return rows[0] ?? null;
  }

  /** A new list; null when the owner has one with that name. */
  async insert(ownerId: number, name: string, properties: string[] = [], q: Query = this.db): Promise<number | null> {
    const rows: Array<{ id: number }> = await q.query(
      `INSERT INTO entity_lists (owner_id, name, properties) VALUES ($1, $2, $3) ON CONFLICT (owner_id, name) DO NOTHING RETURNING id`,
      [ownerId, name, properties],
    );
    return rows[0]?.id ?? null;
  }

  /**
   * The owner's list `name`, created when missing, with `properties` added (in order, after the
   * ones it has; new ones raise `revision`: a served copy gains columns). Locks the list row
   * until the transaction ends.
   */
  async ensure(m: EntityManager, ownerId: number, name: string, properties: string[]): Promise<number> {
    const rows: Array<{ id: number }> = await m.query(
      `INSERT INTO entity_lists (owner_id, name, properties) VALUES ($1, $2, $3)
       ON CONFLICT (owner_id, name) DO UPDATE SET
         properties = entity_lists.properties || ARRAY(SELECT p FROM unnest(EXCLUDED.properties) WITH ORDINALITY AS x(p, i)
                                                       WHERE p <> ALL (entity_lists.properties) ORDER BY i),
         date_modified = CASE WHEN EXCLUDED.properties <@ entity_lists.properties THEN entity_lists.date_modified ELSE now() END,
         revision = entity_lists.revision + CASE WHEN EXCLUDED.properties <@ entity_lists.properties THEN 0 ELSE 1 END
       RETURNING id`,
      [ownerId, name, properties],
    );
    return rows[0]!.id;
  }

  /** Records that `formId` uses the list (registration: `actions` holds `create`). */
  async linkForm(m: EntityManager, listId: number, formId: number, actions: string[], saveTo: string[]): Promise<void> {
    await m.query(
      `INSERT INTO entity_list_forms (list_id, form_id, actions, save_to) VALUES ($1, $2, $3, $4)
       ON CONFLICT (list_id, form_id) DO UPDATE SET actions = EXCLUDED.actions, save_to = EXCLUDED.save_to`,
      [listId, formId, actions, saveTo],
    );
  }

  /** Forgets the lists a form no longer names (a replaced definition). */
  async unlinkFormExcept(m: EntityManager, formId: number, keepListIds: number[]): Promise<void> {
    await m.query(`DELETE FROM entity_list_forms WHERE form_id = $1 AND NOT (list_id = ANY($2::int[]))`, [formId, keepListIds]);
  }

  /** The live forms that use the list, oldest first. */
  async formsOf(listId: number, q: Query = this.db): Promise<ListFormRow[]> {
    return q.query(
      `SELECT f.id AS form_id, f.title, f.id_string, lf.actions, lf.save_to FROM entity_list_forms lf
       JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = $1 ORDER BY f.id`,
      [listId],
    );
  }

  /** The lists `userId` may see (owner, or a role on a live form that uses the list), paged by id; `'all'`: every list. */
  async visible(userId: number | 'all', offset: number, limit: number): Promise<{ rows: Array<EntityListRow & EntityListCounts>; total: number }> {
    const where = userId === 'all' ? 'TRUE' : `(l.owner_id = $3 OR EXISTS (SELECT 1 FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL
         JOIN form_roles r ON r.form_id = f.id AND r.user_id = $3 WHERE lf.list_id = l.id))`;
    const params: unknown[] = [limit, offset];
    if (userId !== 'all') params.push(userId);
    const rows: Array<EntityListRow & EntityListCounts & { total: string }> = await this.db.query(
      `SELECT ${LIST_COLUMNS}, count(*) OVER () AS total,
         (SELECT count(*)::int FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = l.id AND 'create' = ANY(lf.actions)) AS num_registration_forms,
         (SELECT count(*)::int FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = l.id AND NOT ('create' = ANY(lf.actions))) AS num_follow_up_forms,
         (SELECT count(*)::int FROM entities e WHERE e.list_id = l.id AND e.deleted_at IS NULL) AS num_entities
       FROM entity_lists l JOIN users u ON u.id = l.owner_id WHERE ${where} ORDER BY l.id LIMIT $1 OFFSET $2`,
      params,
    );
    const total = rows.length ? Number(rows[0]!.total) : offset ? await this.countVisible(userId) : 0;
    return { rows, total };
  }

  private async countVisible(userId: number | 'all'): Promise<number> {
    const rows: Array<{ n: number }> = userId === 'all'
      ? await this.db.query(`SELECT count(*)::int AS n FROM entity_lists`)
      : await this.db.query(
          `SELECT count(*)::int AS n FROM entity_lists l WHERE l.owner_id = $1 OR EXISTS (SELECT 1 FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL
             JOIN form_roles r ON r.form_id = f.id AND r.user_id = $1 WHERE lf.list_id = l.id)`,
          [userId],
        );
    return rows[0]!.n;
  }

  async counts(listId: number): Promise<EntityListCounts> {
    const rows: EntityListCounts[] = await this.db.query(
      `SELECT
         (SELECT count(*)::int FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = $1 AND 'create' = ANY(lf.actions)) AS num_registration_forms,
         (SELECT count(*)::int FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = $1 AND NOT ('create' = ANY(lf.actions))) AS num_follow_up_forms,
         (SELECT count(*)::int FROM entities e WHERE e.list_id = $1 AND e.deleted_at IS NULL) AS num_entities`,
      [listId],
    );
    return rows[0]!;
  }

  /** Whether one of these live forms uses the list. */
  async usedByAnyForm(listId: number, formIds: readonly number[]): Promise<boolean> {
    if (!formIds.length) return false;
    const rows = await this.db.query(
      `SELECT 1 FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = $1 AND lf.form_id = ANY($2::int[]) LIMIT 1`,
      [listId, [...formIds]],
    );
    return rows.length > 0;
  }

  /** The highest role `userId` has on a live form that uses the list (null: none). */
  async bestFormRole(listId: number, userId: number): Promise<FormRole | null> {
    const rows: Array<{ role: FormRole }> = await this.db.query(
      `SELECT r.role FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL
       JOIN form_roles r ON r.form_id = f.id AND r.user_id = $2 WHERE lf.list_id = $1`,
      [listId, userId],
    );
    return rows.length ? rows.map((r) => r.role).reduce((a, b) => (roleRank(a) >= roleRank(b) ? a : b)) : null;
  }

  /**
   * The list changed (an entity created, updated or deleted): its `revision` goes up in the
   * same transaction, what a served copy of the list is compared by (docs/entities.md "The model").
   */
  async bumpRevision(m: EntityManager, listId: number): Promise<void> {
    await preparedQueryIn(m, `UPDATE entity_lists SET revision = revision + 1, date_modified = now() WHERE id = $1`, [listId]);
  }

  async delete(listId: number): Promise<void> {
    await this.db.query(`DELETE FROM entity_lists WHERE id = $1`, [listId]);
  }
}
