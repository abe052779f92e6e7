import { randomUUID } from 'node:crypto';
import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { EntityManager } from 'typeorm';
import type { AuthenticatedUser } from '../../auth/authenticated-user.js';
import { CollectConfig } from '../../config/collect-config.js';
import { EntityChanges } from '../changes/entity-changes.js';
import { EntityApplyService } from '../intake/entity-apply.service.js';
import { EntityProblem, normalizeUuid } from '../intake/entity-item.js';
import { EntityListAccess } from '../lists/entity-list-access.js';
import type { EntityListRow } from '../lists/entity-lists.repository.js';
import { EntityListsRepository } from '../lists/entity-lists.repository.js';
import { EntitiesRepository, type EntityData, type EntityRow } from '../records/entities.repository.js';
import { pageWindow, type CreateEntitiesDto, type EntityBody, type EntityListingQueryDto, type PatchEntityDto, type PatchEntityQueryDto } from './entity-api.dto.js';
import { entityJson } from './entity-json.js';

interface NewEntity {
  uuid: string;
  label: string;
  data: EntityData;
}

/** `/api/v2/entity-lists/{pk}/entities` (docs/entities.md "API"). */
@Injectable()
export class EntitiesService {
  constructor(
    private readonly entities: EntitiesRepository,
    private readonly lists: EntityListsRepository,
    private readonly access: EntityListAccess,
    private readonly apply: EntityApplyService,
    private readonly changes: EntityChanges,
    private readonly config: CollectConfig,
  ) {}

  async list(user: AuthenticatedUser | undefined, pk: string, query: EntityListingQueryDto): Promise<{ body: EntityBody[]; total: number; page: number; pageSize: number }> {
    const list = await this.access.readable(user, pk);
    const { page, pageSize, offset } = pageWindow(query);
    const { rows, total } = await this.entities.page(list.id, { deleted: query.deleted === true, search: query.search, offset, limit: pageSize });
    return { body: rows.map((r) => entityJson(this.config.PUBLIC_BASE_URL, r)), total, page, pageSize };
  }

  async get(user: AuthenticatedUser | undefined, pk: string, id: string): Promise<EntityBody> {
    const list = await this.access.readable(user, pk);
    return entityJson(this.config.PUBLIC_BASE_URL, await this.findOr404(list, id));
  }

  /** One entity (answers it) or `{"entities": [...]}` (answers `{"created": n}`), all or nothing. */
  async create(user: AuthenticatedUser | undefined, pk: string, body: CreateEntitiesDto): Promise<EntityBody | { created: number }> {
    const list = await this.access.writable(user, pk);
    const bulk = body.entities !== undefined;
    if (bulk && (body.uuid !== undefined || body.label !== undefined || body.data !== undefined)) {
      throw new FieldValidationError({ entities: ['Send either one entity (uuid, label, data) or "entities", not both.'] });
    }
    const items: NewEntity[] = [];
    const seen = new Set<string>();
    const raw = bulk ? body.entities! : [{ ...(body.uuid !== undefined ? { uuid: body.uuid } : {}), label: body.label, ...(body.data !== undefined ? { data: body.data } : {}) }];
    raw.forEach((r, i) => {
      const where = bulk ? `entities[${i}]` : null;
      const item = checkNewEntity(r, list.properties, where);
      if (seen.has(item.uuid)) throw new FieldValidationError({ [where ?? 'uuid']: [`The uuid ${item.uuid} is given twice.`] });
      seen.add(item.uuid);
      items.push(item);
    });
    const creatorId = user?.id ?? null;
    return this.entities.transaction(async (m) => {
      const taken = await this.entities.existingUuids(m, list.id, items.map((i) => i.uuid));
      if (taken.length) {
        const first = items.findIndex((i) => taken.includes(i.uuid));
        throw new FieldValidationError({ [bulk ? `entities[${first}]` : 'uuid']: [`An entity with uuid ${items[first]!.uuid} exists already in this list (deleted ones count).`] });
      }
      if (!bulk) {
        const item = items[0]!;
        const entity = await this.entities.create(m, list.id, item.uuid, {
          version: 1, label: item.label, data: item.data, dataReceived: { ...item.data, label: item.label }, baseVersion: null, trunkVersion: null, branchId: null,
          branchBaseVersion: null, conflict: null, conflictingProperties: null, source: 'api', submissionId: null, creatorId,
        });
        if (!entity) throw new ConflictException({ detail: `An entity with uuid ${item.uuid} exists already in this list.` });
        await this.apply.changed(m, list, entity, 'entity_created', null);
        return entityJson(this.config.PUBLIC_BASE_URL, entity);
      }
      const created = await this.entities.createMany(m, list.id, items, creatorId);
      await this.lists.bumpRevision(m, list.id);
      await this.changes.record(m, created.map((c) => ({ type: 'entity_created' as const, listId: list.id, listName: list.name, ownerId: list.owner_id, entityId: c.id, uuid: c.uuid, version: 1, submissionId: null })));
      return { created: created.length };
    });
  }

  /**
   * Merges `label` and `data` into the entity as a new version; `base_version` other than the
   * current one is a 409 unless `force`; `resolve` clears a conflict (docs/entities.md "Conflicts").
   */
  async patch(user: AuthenticatedUser | undefined, pk: string, id: string, body: PatchEntityDto, query: PatchEntityQueryDto): Promise<EntityBody> {
    const list = await this.access.writable(user, pk);
    const existing = await this.findOr404(list, id);
    const label = body.label;
    if (label !== undefined && label !== null && !label.trim()) throw new FieldValidationError({ label: ['The label cannot be blank.'] });
    const changes: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(body.data ?? {})) {
      if (!list.properties.includes(k)) throw new FieldValidationError({ data: [`The list has no property "${k.slice(0, 100)}".`] });
      if (v !== null && typeof v !== 'string') throw new FieldValidationError({ data: [`The value of "${k}" must be a string or null.`] });
      changes[k] = v === '' ? null : v;
    }
    const hasChanges = (label !== undefined && label !== null) || Object.keys(changes).length > 0;
    if (!hasChanges && !query.resolve) throw new FieldValidationError({ data: ['Nothing to change: give label or data, or resolve=true.'] });
    return this.entities.transaction(async (m) => {
      await this.entities.lock(m, list.id, existing.uuid);
      const current = await this.entities.findForUpdate(m, list.id, existing.id);
      if (!current) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
      if (query.base_version !== undefined && query.base_version !== current.version && !query.force) {
        throw new ConflictException({ detail: `The entity is at version ${current.version}, not ${query.base_version}; send force=true to change it anyway.` });
      }
      let entity: EntityRow = current;
      const conflict = query.resolve ? null : current.conflict;
      if (hasChanges) {
        const data: EntityData = { ...current.data };
        const received: EntityData = {};
        for (const [k, v] of Object.entries(changes)) {
          received[k] = v ?? '';
          if (v === null) delete data[k];
          else data[k] = v;
        }
        if (label) received.label = label;
        entity = await this.entities.addVersion(m, current.id, {
          version: current.version + 1, label: label ?? current.label, data, dataReceived: received, baseVersion: current.version, trunkVersion: null, branchId: null,
          branchBaseVersion: null, conflict: null, conflictingProperties: null, source: 'api', submissionId: null, creatorId: user?.id ?? null,
        }, conflict);
        await this.apply.changed(m, list, entity, 'entity_updated', null);
      } else if (current.conflict !== null) {
        entity = await this.entities.setConflict(m, current.id, null);
        await this.apply.changed(m, list, entity, 'entity_updated', null);
      }
      return entityJson(this.config.PUBLIC_BASE_URL, entity);
    });
  }

  async delete(user: AuthenticatedUser | undefined, pk: string, id: string): Promise<void> {
    const list = await this.access.writable(user, pk);
    const entity = await this.findOr404(list, id);
    await this.deleteIds(list, [entity.id]);
  }

  /** Deletes the live entities of the list among `ids` (others are left alone). */
  async bulkDelete(user: AuthenticatedUser | undefined, pk: string, ids: number[]): Promise<void> {
    const list = await this.access.writable(user, pk);
    await this.deleteIds(list, ids);
  }

  private async deleteIds(list: EntityListRow, ids: number[]): Promise<void> {
    await this.entities.transaction(async (m: EntityManager) => {
      const deleted = await this.entities.softDelete(m, list.id, ids);
      if (!deleted.length) return;
      await this.lists.bumpRevision(m, list.id);
      await this.changes.record(m, deleted.map((d) => ({ type: 'entity_deleted' as const, listId: list.id, listName: list.name, ownerId: list.owner_id, entityId: d.id, uuid: d.uuid, version: d.version, submissionId: null })));
    });
  }

  private async findOr404(list: EntityListRow, id: string): Promise<EntityRow> {
    const n = /^\d{1,15}$/.test(id) ? Number(id) : NaN;
    const entity = Number.isSafeInteger(n) ? await this.entities.find(list.id, n) : null;
    if (!entity) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return entity;
  }
}

/** One entity of a create request, checked; a FieldValidationError names it (`where`) and what is wrong. */
function checkNewEntity(raw: unknown, properties: string[], where: string | null): NewEntity {
  const fail = (field: string, message: string): never => {
    throw new FieldValidationError({ [where ?? field]: [where ? `${field}: ${message}` : message] });
  };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return fail('entity', 'Expected an object with uuid, label and data.');
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) if (!['uuid', 'label', 'data'].includes(key)) fail(key, 'Unknown field.');
  let uuid: string = randomUUID();
  if (r.uuid !== undefined && r.uuid !== null && r.uuid !== '') {
    if (typeof r.uuid !== 'string') fail('uuid', 'Must be a string.');
    try {
      uuid = normalizeUuid(r.uuid as string, 'uuid');
    } catch (err) {
      fail('uuid', (err as EntityProblem).message);
    }
  }
  if (typeof r.label !== 'string' || !r.label.trim()) fail('label', 'A non-blank label is required.');
  if ((r.label as string).length > 10_000) fail('label', 'At most 10,000 characters.');
  const data: EntityData = {};
  if (r.data !== undefined && r.data !== null) {
    if (typeof r.data !== 'object' || Array.isArray(r.data)) fail('data', 'Must be an object of strings.');
    for (const [k, v] of Object.entries(r.data as Record<string, unknown>)) {
      if (!properties.includes(k)) fail('data', `The list has no property "${k.slice(0, 100)}".`);
      if (typeof v !== 'string') fail('data', `The value of "${k}" must be a string.`);
      data[k] = v as string;
    }
  }
  return { uuid, label: r.label as string, data };
}
