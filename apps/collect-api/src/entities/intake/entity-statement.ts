import type { XmlNode } from '../../openrosa/xml.js';
import type { FormEntities } from '../declarations/form-entities.js';
import type { EntityData } from '../records/entities.repository.js';
import { entityBlocks } from './entity-blocks.js';
import { entityItemOf, EntityProblem } from './entity-item.js';

/**
 * The entity work of a new submission that its one-statement insert can do itself
 * (docs/entities.md, "Intake: one statement"): one block, one list, a create with its label or an
 * update with its base version, outside any offline branch. Everything else the statement
 * cannot decide from the instance alone, and intake's transactional path applies it.
 */
export interface StatementEntity {
  /** The form's owner: the list is looked up by (owner, name) in the statement. */
  ownerId: number;
  list: string;
  /** Normalized (lower case, no `uuid:`). */
  uuid: string;
  kind: 'create' | 'update';
  /** null: none or blank (an update keeps the entity's label). */
  label: string | null;
  /** The values received; the statement keeps the list's properties only. */
  data: EntityData;
  /** An update's `baseVersion` (the statement acts only when it is the entity's current version). */
  baseVersion: number | null;
}

/**
 * The submission's entity work as a StatementEntity, or null when the one statement must not try
 * it: no block or several, a block in a repeat, a refusal to record (`_entity_errors`: a bad uuid,
 * a missing label or base version, an action the form does not declare), an offline branch
 * (`branchId`/`trunkVersion`: held updates and branch bases), or a block that both creates and
 * updates (which one applies depends on the entity's existence).
 */
export function statementEntityOf(declared: FormEntities, root: XmlNode, ownerId: number, submitterId: number | null): StatementEntity | null {
  if (declared.declarations.some((d) => d.repeat)) return null;
  const blocks = entityBlocks(root, declared.declarations);
  if (blocks.length !== 1) return null;
  let item;
  try {
    item = entityItemOf(blocks[0]!, submitterId);
  } catch (err) {
    if (err instanceof EntityProblem) return null;
    throw err;
  }
  if (!item.list.trim() || item.branchId !== null || item.trunkVersion !== null || item.create === item.update) return null;
  const allowed = declared.declarations.filter((d) => d.list === item.list).flatMap((d) => d.actions);
  const kind = item.create ? 'create' : 'update';
  if (!allowed.includes(kind)) return null;
  if (kind === 'create' ? !item.label : item.baseVersion === null) return null;
  return { ownerId, list: item.list, uuid: item.uuid, kind, label: item.label, data: item.data, baseVersion: item.baseVersion };
}
