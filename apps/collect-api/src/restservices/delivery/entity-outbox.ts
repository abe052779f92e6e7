import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { preparedQueryIn } from '../../database/prepared-query.js';
import { EntityChanges, type EntityChange } from '../../entities/changes/entity-changes.js';
import { DELIVERY_CHANNEL } from './delivery-outbox.js';

/** The members of an entity event's `entity` object, each an SQL expression. */
type EntitySnapshotColumns = Record<(typeof ENTITY_MEMBERS)[number], string>;
const ENTITY_MEMBERS = ['id', 'list_id', 'uuid', 'label', 'data', 'version', 'conflict', 'creator_submission_id', 'date_created', 'date_modified', 'deleted_at'] as const;

/** Each member read from the same-named column of `alias` (an `entities` row, or a row shaped like one). */
export function entityColumns(alias: string): EntitySnapshotColumns {
  return Object.fromEntries(ENTITY_MEMBERS.map((m) => [m, `${alias}.${m}`])) as EntitySnapshotColumns;
}

/**
 * The snapshot of an entity event (docs/entities.md, "Entity events to rest services"):
 * `{"list": <list name>, "entity": {...}}`, what the sender turns into the body. One shape for
 * every writer of entity rows: intake's statement, the other changes, and a replay.
 */
export function entitySnapshotSql(list: string, c: EntitySnapshotColumns): string {
  return `jsonb_build_object('list', ${list}, 'entity', jsonb_build_object(${ENTITY_MEMBERS.map((m) => `'${m}', ${c[m]}`).join(', ')}))`;
}

/**
 * SQL: the outbox rows of a batch of entity changes ($1 entity ids, $2 events, $3 the version
 * each change left), one per active service whose `events` take the event and whose form uses
 * the entity's list (entity_list_forms), in the order of the changes, so that the rows of one
 * entity go out in the order they were made (the claim's ordering, delivery/delivery-statements.ts).
 * The snapshot holds the entity as that version left it (entity_versions, the row for what a
 * version does not keep) and the list's name: every attempt sends what the event was about.
 */
const ENTITY_ROWS_SQL = `WITH c AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[]) WITH ORDINALITY AS c(entity_id, event, version, ord)),
  queued AS (
    INSERT INTO rest_deliveries (delivery_id, service_id, entity_id, event, snapshot, next_attempt_at)
    SELECT gen_random_uuid(), rs.id, e.id, c.event,
      ${entitySnapshotSql('l.name', { ...entityColumns('e'), label: 'COALESCE(v.label, e.label)', data: 'COALESCE(v.data, e.data)', version: 'c.version' })},
      now()
    FROM c JOIN entities e ON e.id = c.entity_id JOIN entity_lists l ON l.id = e.list_id
    LEFT JOIN entity_versions v ON v.entity_id = e.id AND v.version = c.version AND c.event <> 'entity_deleted'
    JOIN rest_services rs ON rs.active AND c.event = ANY(rs.events)
      AND rs.form_id IN (SELECT lf.form_id FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = e.list_id)
    ORDER BY c.ord, rs.id
    RETURNING 1)
  SELECT count(*)::int AS queued FROM queued`;

/**
 * The same rows as a CTE of intake's one statement (EntityChangeStatementSink): the changes come
 * from the statement's CTE `changed`, which carries the entity as the change left it (a sibling
 * CTE's rows are not in the tables yet for the statement), the list's name with it.
 */
function entityRowsStatementSql(changed: string): string {
  return `INSERT INTO rest_deliveries (delivery_id, service_id, entity_id, event, snapshot, next_attempt_at)
    SELECT gen_random_uuid(), rs.id, c.entity_id, c.event,
      ${entitySnapshotSql('c.list_name', { ...entityColumns('c'), id: 'c.entity_id', deleted_at: 'NULL' })},
      now()
    FROM ${changed} c
    JOIN rest_services rs ON rs.active AND c.event = ANY(rs.events)
      AND rs.form_id IN (SELECT lf.form_id FROM entity_list_forms lf JOIN forms f ON f.id = lf.form_id AND f.deleted_at IS NULL WHERE lf.list_id = c.list_id)
    ORDER BY c.n, rs.id
    RETURNING 1`;
}

/**
 * The rest-service side of entity changes (docs/entities.md, "Entity events to rest services"):
 * a sink of the entities' EntityChanges port, which every create, update and delete (intake,
 * API, bulk, held updates) calls inside its transaction, so the outbox rows commit or roll back
 * with the change. When it wrote rows it NOTIFYs the worker's relay in the same transaction
 * (PostgreSQL delivers the notification at commit, never after a rollback); without a service
 * that takes entity events, the change costs this one statement.
 */
@Injectable()
export class EntityOutbox implements OnModuleInit {
  constructor(private readonly changes: EntityChanges) {}

  onModuleInit(): void {
    this.changes.register((m, changes) => this.record(m, changes), entityRowsStatementSql);
  }

  async record(m: EntityManager, changes: EntityChange[]): Promise<void> {
    // A fixed text: a named prepared statement, planned once per connection (its planning was most of its cost).
    const [{ queued }] = await preparedQueryIn<{ queued: number }>(m, ENTITY_ROWS_SQL, [changes.map((c) => c.entityId), changes.map((c) => c.type), changes.map((c) => c.version)]);
    if (queued) await m.query(`SELECT pg_notify('${DELIVERY_CHANNEL}', '')`);
  }
}
