import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EntityChanges, type EntityChange } from '../changes/entity-changes.js';
import type { EntityListRow } from '../lists/entity-lists.repository.js';
import { EntityListsRepository } from '../lists/entity-lists.repository.js';
import { EntitiesRepository, type Conflict, type EntityData, type EntityRow, type EntityVersionRow } from '../records/entities.repository.js';
import { EntityProblem, type EntityItem } from './entity-item.js';
import { HeldUpdatesRepository } from './held-updates.repository.js';

/**
 * Updates held for the version they build on, per list, at most (docs/entities.md "Held updates"):
 * past it a further one is refused into `_entity_errors`.
 */
export const MAX_HELD_PER_LIST = 10_000;
/** Days an update is held at most; then it is applied on the current version, or refused when the entity never came. */
export const HELD_DAYS = 5;

/**
 * The entity changes of one submission's intake, told (EntityChanges) and counted in the lists'
 * `revision` once, at the end of its entity work (EntityApplyService.flush): one outbox statement
 * for all of them, and a list row locked only from there to the commit, not from the first
 * entity on (docs/entities.md "Submissions").
 */
export class IntakeChanges {
  readonly changes: EntityChange[] = [];
  readonly lists = new Set<number>();
}

/** What applying an item did: the version made (null: held, or nothing to do). */
export interface Applied {
  entity: EntityRow;
  branchId: string | null;
  branchBaseVersion: number | null;
}

/**
 * The rules of entity versions from submissions (docs/entities.md "Conflicts", "Offline
 * branches", "Held updates"), as ODK Central applies them. Every method runs in the caller's
 * transaction, with the entity's lock taken (EntitiesRepository.lock).
 */
@Injectable()
export class EntityApplyService {
  constructor(
    private readonly entities: EntitiesRepository,
    private readonly lists: EntityListsRepository,
    private readonly held: HeldUpdatesRepository,
    private readonly changes: EntityChanges,
  ) {}

  /**
   * One item of a submission: update (falling back to create when the entity does not exist
   * and the block also creates), or create. Then the held updates that follow the new version
   * are applied, in branch order. Refusals throw EntityProblem.
   */
  async apply(m: EntityManager, list: EntityListRow, item: EntityItem, submissionId: number, batch: IntakeChanges): Promise<Applied | null> {
    await this.entities.lock(m, list.id, item.uuid);
    let applied: Applied | null;
    if (item.update) {
      try {
        applied = await this.update(m, list, item, submissionId, false, batch);
      } catch (err) {
        if (!(err instanceof EntityProblem) || !item.create || (err.kind !== 'not-found' && err.kind !== 'no-base-version')) throw err;
        applied = await this.create(m, list, item, submissionId, batch);
      }
    } else if (item.create) {
      applied = await this.create(m, list, item, submissionId, batch);
    } else return null;
    if (applied) await this.releaseHeld(m, list, applied, batch);
    return applied;
  }

  private async create(m: EntityManager, list: EntityListRow, item: EntityItem, submissionId: number, batch: IntakeChanges): Promise<Applied> {
    if (!item.label) throw new EntityProblem('The entity has no label.');
    const data = onlyProperties(item.data, list.properties);
    const entity = await this.entities.create(m, list.id, item.uuid, {
      version: 1, label: item.label, data, dataReceived: withLabel(data, item.label), baseVersion: null, trunkVersion: item.trunkVersion, branchId: item.branchId,
      branchBaseVersion: null, conflict: null, conflictingProperties: null, source: 'submission', submissionId, creatorId: item.submitterId,
    });
    if (!entity) throw new EntityProblem(`An entity with uuid ${item.uuid} exists already in list "${list.name}".`);
    note(batch, list, entity, 'entity_created', submissionId);
    return { entity, branchId: item.branchId, branchBaseVersion: null };
  }

  private async update(m: EntityManager, list: EntityListRow, item: EntityItem, submissionId: number, force: boolean, batch: IntakeChanges): Promise<Applied | null> {
    if (item.baseVersion === null) throw new EntityProblem('The entity update has no baseVersion.', 'no-base-version');
    const current = await this.entities.findByUuidForUpdate(m, list.id, item.uuid);
    if (current?.deleted_at) throw new EntityProblem(`The entity ${item.uuid} of list "${list.name}" was deleted.`);
    if (!current) {
      // An offline branch's update may arrive before the create it follows: held for it.
      if (item.branchId && !force) return this.hold(m, list, item, submissionId);
      throw new EntityProblem(`No entity ${item.uuid} in list "${list.name}".`, 'not-found');
    }
    const base = await this.baseOf(m, current, item, force);
    if (!base) return this.hold(m, list, item, submissionId);
    if (item.trunkVersion !== null && item.trunkVersion > current.version) {
      throw new EntityProblem(`Base version (trunkVersion=${item.trunkVersion}) does not exist for entity ${item.uuid} in list "${list.name}".`);
    }
    const received = onlyProperties(item.data, list.properties);
    const dataReceived = item.label ? withLabel(received, item.label) : received;
    let conflict: Conflict = current.conflict;
    let versionConflict: Conflict = null;
    let conflictingProperties: string[] | null = null;
    if (base.version !== current.version) {
      // Changed on the server since the version the client built on: which of those changes
      // did this update touch too, with another value? (docs/entities.md "Conflicts")
      const serverChanged: EntityData = Object.create(null) as EntityData;
      for (const key of new Set([...Object.keys(current.data), ...Object.keys(base.data)])) {
        if (current.data[key] !== base.data[key]) serverChanged[key] = current.data[key] ?? '';
      }
      if (current.label !== base.label) serverChanged.label = current.label;
      conflictingProperties = Object.keys(dataReceived).filter((k) => k in serverChanged && dataReceived[k] !== serverChanged[k]);
      versionConflict = conflictingProperties.length ? 'hard' : 'soft';
      if (conflict !== 'hard') conflict = versionConflict;
    } else if (item.branchId && (await this.entities.interrupted(m, current.id, item.branchId, item.trunkVersion ?? 1))) {
      // Contiguous with the branch's own last version, but another version came between the
      // branch's trunk and now.
      versionConflict = 'soft';
      if (conflict !== 'hard') conflict = 'soft';
    }
    const entity = await this.entities.addVersion(m, current.id, {
      version: current.version + 1, label: item.label ?? current.label, data: { ...current.data, ...received }, dataReceived,
      baseVersion: base.version, trunkVersion: item.trunkVersion, branchId: item.branchId, branchBaseVersion: item.branchId ? item.baseVersion : null,
      conflict: versionConflict, conflictingProperties, source: 'submission', submissionId, creatorId: item.submitterId,
    }, conflict);
    note(batch, list, entity, 'entity_updated', submissionId);
    return { entity, branchId: item.branchId, branchBaseVersion: item.branchId ? item.baseVersion : null };
  }

  /**
   * The version the update was made from (docs/entities.md "Offline branches"): outside a
   * branch, `baseVersion` itself; in a branch, version 1 (the create), the trunk version (the
   * branch's first update), or the version this branch made from its own `baseVersion - 1`.
   * Null: not arrived yet (hold). Forced: the current version stands in for a missing one.
   */
  private async baseOf(m: EntityManager, current: EntityRow, item: EntityItem, force: boolean): Promise<EntityVersionRow | null> {
    const baseVersion = item.baseVersion!;
    if (!item.branchId) {
      const v = await this.entities.versionAt(m, current.id, baseVersion);
      if (!v) throw new EntityProblem(`Base version ${baseVersion} does not exist for entity ${item.uuid}.`);
      return v;
    }
    const v = baseVersion === 1 || baseVersion === item.trunkVersion
      ? await this.entities.versionAt(m, current.id, baseVersion)
      : await this.entities.branchVersion(m, current.id, item.branchId, baseVersion - 1);
    if (v || !force) return v;
    return { version: current.version, label: current.label, data: current.data, branch_id: null, branch_base_version: null };
  }

  private async hold(m: EntityManager, list: EntityListRow, item: EntityItem, submissionId: number): Promise<null> {
    if ((await this.held.countHeld(m, list.id)) >= MAX_HELD_PER_LIST) {
      throw new EntityProblem(`List "${list.name}" holds ${MAX_HELD_PER_LIST} updates waiting for earlier versions already; this one was not kept.`);
    }
    await this.held.hold(m, list.id, submissionId, item);
    return null;
  }

  /**
   * The held updates that follow `applied`, one after another in branch order; a held update
   * that fails now gets its error on its own submission.
   */
  private async releaseHeld(m: EntityManager, list: EntityListRow, applied: Applied, batch: IntakeChanges): Promise<void> {
    let at: Applied | null = applied;
    // The statement that made the version said whether any update waits for this entity: none, no look.
    while (at && at.entity.held_waiting !== false) {
      const next = await this.held.takeNext(m, list.id, at.entity.uuid, at.branchId, (at.branchBaseVersion ?? 0) + 1);
      if (!next) return;
      try {
        at = await this.update(m, list, next.item, next.submission_id, false, batch);
      } catch (err) {
        if (!(err instanceof EntityProblem)) throw err;
        await this.held.addSubmissionErrors(m, next.submission_id, [{ list: list.name, uuid: next.item.uuid, error: err.message }]);
        return;
      }
    }
  }

  /**
   * The held updates that follow the current version of `entity`, made outside any branch by
   * intake's one statement (EntityIntakeService.releaseHeldAfterStatement), applied and told as
   * after any version.
   */
  async releaseAfter(m: EntityManager, list: EntityListRow, entity: EntityRow): Promise<void> {
    const batch = new IntakeChanges();
    await this.releaseHeld(m, list, { entity, branchId: null, branchBaseVersion: null }, batch);
    await this.flush(m, batch);
  }

  /**
   * The time bound (docs/entities.md "Held updates"): updates held longer than HELD_DAYS are
   * applied on the entity's current version (a soft conflict at least), or refused into their
   * submission's `_entity_errors` when the entity never arrived. Without `batch` (on its own)
   * its changes are told at once; with it, they join that submission's.
   */
  async expireHeld(m: EntityManager, list: EntityListRow, into?: IntakeChanges): Promise<number> {
    const batch = into ?? new IntakeChanges();
    const expired = await this.held.takeExpired(m, list.id, HELD_DAYS);
    for (const h of expired) {
      await this.entities.lock(m, list.id, h.item.uuid);
      try {
        const applied = await this.update(m, list, h.item, h.submission_id, true, batch);
        if (applied) await this.releaseHeld(m, list, applied, batch);
      } catch (err) {
        if (!(err instanceof EntityProblem)) throw err;
        const message = err.kind === 'not-found' ? `Held ${HELD_DAYS} days for entity ${h.item.uuid}, which never arrived.` : err.message;
        await this.held.addSubmissionErrors(m, h.submission_id, [{ list: list.name, uuid: h.item.uuid, error: message }]);
      }
    }
    if (!into) await this.flush(m, batch);
    return expired.length;
  }

  /**
   * The end of a submission's entity work: its changes told in one call, then each list's
   * `revision` raised once, in list id order (two submissions touching the same lists lock
   * their rows in the same order).
   */
  async flush(m: EntityManager, batch: IntakeChanges): Promise<void> {
    await this.changes.record(m, batch.changes);
    for (const listId of [...batch.lists].sort((a, b) => a - b)) await this.lists.bumpRevision(m, listId);
  }

  /** One change outside intake (the API): told and counted at once. */
  async changed(m: EntityManager, list: EntityListRow, entity: EntityRow, type: EntityChange['type'], submissionId: number | null): Promise<void> {
    await this.lists.bumpRevision(m, list.id);
    await this.changes.record(m, [{ type, listId: list.id, listName: list.name, ownerId: list.owner_id, entityId: entity.id, uuid: entity.uuid, version: entity.version, submissionId }]);
  }
}

function note(batch: IntakeChanges, list: EntityListRow, entity: EntityRow, type: EntityChange['type'], submissionId: number): void {
  batch.changes.push({ type, listId: list.id, listName: list.name, ownerId: list.owner_id, entityId: entity.id, uuid: entity.uuid, version: entity.version, submissionId });
  batch.lists.add(list.id);
}

/** The values of properties the list has (a form's old property the list lost is left out). */
export function onlyProperties(data: EntityData, properties: string[]): EntityData {
  const out: EntityData = {};
  for (const [k, v] of Object.entries(data)) if (properties.includes(k)) out[k] = v;
  return out;
}

function withLabel(data: EntityData, label: string): EntityData {
  return { ...data, label };
}
