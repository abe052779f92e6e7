import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { cursorRows } from '../database/cursor.js';
import type { ReadLease } from '../database/read-pool.js';

/** What the manifest and the CSV need of a list: never its entities. */
export interface ListHead {
  id: number;
  name: string;
  ownerId: number;
  properties: string[];
  /** Raised in the transaction of every change of the list's entities or properties (docs/entities.md, "The list's hash"). */
  revision: number;
}

/** One entity as the list's CSV shows it: the property values in the list's property order. */
export interface ListCsvRow {
  name: string;
  label: string;
  version: number;
  values: Array<string | null>;
}

const HEAD_COLUMNS = `id, name, owner_id AS "ownerId", properties, revision::text AS revision`;
const toHead = (r: ListHead & { revision: string | number }): ListHead => ({ ...r, revision: Number(r.revision) });

/**
 * Reads of entity lists for their CSV (docs/entities.md, "Follow-up forms and their list
 * attachment"): the list heads by owner and name (one indexed probe, the manifest's), and the
 * live entities of one list through a cursor on a read lease, with the head read in the same
 * snapshot so that the CSV and the hash it is served under describe the same list.
 */
@Injectable()
export class EntityListAttachmentsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The owner's lists among `names` (the unique index on owner and name answers it). */
  async listsNamed(ownerId: number, names: string[]): Promise<ListHead[]> {
    if (!names.length) return [];
    const rows = (await this.db.query(`SELECT ${HEAD_COLUMNS} FROM entity_lists WHERE owner_id = $1 AND name = ANY($2::text[])`, [ownerId, names])) as Array<ListHead & { revision: string }>;
    return rows.map(toHead);
  }

  /** One list by id, or null. */
  async list(id: number): Promise<ListHead | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return null;
    const rows = (await this.db.query(`SELECT ${HEAD_COLUMNS} FROM entity_lists WHERE id = $1`, [id])) as Array<ListHead & { revision: string }>;
    return rows[0] ? toHead(rows[0]) : null;
  }

  /**
   * The list's head as of the cursor's snapshot (`onHead`, before the first row), then its live
   * entities in batches, oldest first (the partial index on live entities serves the order). The
   * property values come from PostgreSQL already in the list's property order.
   */
  async *csvRows(lease: ReadLease, listId: number, onHead: (head: ListHead | null) => void): AsyncGenerator<ListCsvRow[]> {
    const sql = `SELECT e.uuid::text AS name, e.label, e.version,
        ARRAY(SELECT e.data->>p.name FROM unnest(l.properties) WITH ORDINALITY AS p(name, i) ORDER BY p.i) AS values
      FROM entities e JOIN entity_lists l ON l.id = e.list_id
      WHERE e.list_id = $1 AND e.deleted_at IS NULL ORDER BY e.id`;
    yield* cursorRows<ListCsvRow>(lease, sql, [listId], {
      before: async (query) => {
        const rows = (await query(`SELECT ${HEAD_COLUMNS} FROM entity_lists WHERE id = $1`, [listId])) as Array<ListHead & { revision: string }>;
        onHead(rows[0] ? toHead(rows[0]) : null);
      },
    });
  }
}
