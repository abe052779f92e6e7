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
 * Where entity changes are told (docs/entities.md "Changes"): every create, update and delete,
 * whether from a submission, the API or a held update, calls `record` inside its transaction,
 * so a sink's writes (rest-service outbox rows) commit or roll back with the change. Sinks
 * register once at start (onModuleInit of the module that owns them).
 */
@Injectable()
export class EntityChanges {
  private readonly sinks: EntityChangeSink[] = [];

  register(sink: EntityChangeSink): void {
    this.sinks.push(sink);
  }

  async record(m: EntityManager, changes: EntityChange[]): Promise<void> {
    if (!changes.length) return;
    for (const sink of this.sinks) await sink(m, changes);
  }
}
