import type { EntityData } from '../records/entities.repository.js';

/** The attributes and values of one entity block of a submission, as sent (strings or absent). */
export interface RawEntityBlock {
  dataset?: string;
  id?: string;
  create?: string;
  update?: string;
  baseVersion?: string;
  trunkVersion?: string;
  branchId?: string;
  label?: string;
  /** The `save_to` properties whose questions the submission holds ("" included). */
  data: EntityData;
}

/** One entity action of a submission, checked (docs/entities.md "Submissions"). */
export interface EntityItem {
  list: string;
  uuid: string;
  create: boolean;
  update: boolean;
  /** null: none given, or blank (an update then keeps the label). */
  label: string | null;
  data: EntityData;
  baseVersion: number | null;
  trunkVersion: number | null;
  branchId: string | null;
  /** Who made the submission (the version's creator). */
  submitterId: number | null;
}

/** A refusal of one entity action; recorded in the submission's `_entity_errors`, never thrown out of intake. */
export class EntityProblem extends Error {
  constructor(message: string, readonly kind: 'not-found' | 'no-base-version' | 'other' = 'other') {
    super(message);
    this.name = 'EntityProblem';
  }
}

/** Entity ids are version 4 UUIDs, with or without `uuid:`, any case (ODK's entities specification). */
const UUID_V4 = /^(?:uuid:)?([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/i;

export function normalizeUuid(value: string | undefined, field = 'id'): string {
  if (!value || !value.trim()) throw new EntityProblem(`The entity has no ${field}.`);
  const m = UUID_V4.exec(value.trim());
  if (!m) throw new EntityProblem(`The entity ${field} "${value.slice(0, 100)}" is not a version 4 UUID.`);
  return m[1]!.toLowerCase();
}

function isTrue(v: string | undefined): boolean {
  return v === '1' || v === 'true';
}

function blank(v: string | undefined): boolean {
  return v === undefined || v.trim() === '';
}

function integer(v: string, field: string): number {
  if (!/^\d{1,9}$/.test(v.trim())) throw new EntityProblem(`The entity ${field} "${v.slice(0, 100)}" is not an integer.`);
  return Number(v.trim());
}

/** The block as an action, or an EntityProblem (a missing or malformed value). */
export function entityItemOf(raw: RawEntityBlock, submitterId: number | null): EntityItem {
  const uuid = normalizeUuid(raw.id);
  const branchId = blank(raw.branchId) ? null : normalizeUuid(raw.branchId, 'branchId');
  let trunkVersion: number | null = null;
  if (!blank(raw.trunkVersion)) {
    if (!branchId) throw new EntityProblem('The entity has a trunkVersion but no branchId.');
    trunkVersion = integer(raw.trunkVersion!, 'trunkVersion');
  }
  const baseVersion = blank(raw.baseVersion) ? null : integer(raw.baseVersion!, 'baseVersion');
  return {
    list: raw.dataset ?? '', uuid, create: isTrue(raw.create), update: isTrue(raw.update), label: blank(raw.label) ? null : raw.label!,
    data: raw.data, baseVersion, trunkVersion, branchId, submitterId,
  };
}
