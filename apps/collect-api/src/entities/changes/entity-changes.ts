import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

export type EntityChangeType = 'entity_created' | 'entity_updated' | 'entity_deleted';

/** One change of one entity, told inside the transaction that makes it. */
export interface EntityChange {
  type: EntityChangeType;
  listId: number;
  listName: string;
  ownerId: number;
  entityId: number;
  uuid: string;
  /** The entity's version after the change. */
  version: number;
  /** The submission that made it (null: the API). */
  submissionId: number | null;
}

/** Work that must commit or roll back with the change (an outbox insert); runs in its transaction. */
export type EntityChangeSink = (m: EntityManager, changes: EntityChange[]) => Promise<void>;

/**
 * The same work as a data-modifying CTE of intake's one statement (docs/entities.md, "Intake: one
 * statement"): reads the changes from the CTE named `changed` (columns `n` (the order), `event`,
 * `entity_id`, `list_id`, `list_name`, `uuid`, `label`, `data`, `version`, `conflict`,
 * `creator_submission_id`, `date_created`, `date_modified`: the entity as the change left it) and
 * returns one row per row it wrote (a count > 0 wakes the delivery relay after the commit).
 */
export type EntityChangeStatementSink = (changed: string) => string;

/**
 * Where entity changes are told (docs/entities.md "Changes"): every create, update and delete,
 * whether from a submission, the API or a held update, calls `record` inside its transaction,
 * so a sink's writes (rest-service outbox rows) commit or roll back with the change. Sinks
 * register once at start (onModuleInit of the module that owns them).
 */
@Injectable()
export class EntityChanges {
  private readonly sinks: EntityChangeSink[] = [];
  private readonly statementSinks: EntityChangeStatementSink[] = [];
  /** A sink registered without its statement form: intake's one statement then makes no entity changes. */
  private statementless = false;

  register(sink: EntityChangeSink, inStatement?: EntityChangeStatementSink): void {
    this.sinks.push(sink);
    if (inStatement) this.statementSinks.push(inStatement);
    else this.statementless = true;
  }

  /** Whether every sink has its statement form: only then may intake's one statement make entity changes. */
  get inStatement(): boolean {
    return !this.statementless;
  }

  /** The CTE bodies of every sink for intake's one statement (reading `changed`), or null when a sink has none. */
  statementSql(changed: string): string[] | null {
    return this.statementless ? null : this.statementSinks.map((sql) => sql(changed));
  }

  async record(m: EntityManager, changes: EntityChange[]): Promise<void> {
    if (!changes.length) return;
    for (const sink of this.sinks) await sink(m, changes);
  }
}
