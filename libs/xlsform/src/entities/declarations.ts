// The entities sheet: one declaration per row (list name, entity_id, create_if, update_if,
// label), checked as pyxform checks it, and the meta/entity element each declaration becomes
// (docs/xlsform.md, "Entities").
import { isXmlTag, MalformedReference, parseReferences } from '../expression.js';
import { groupSheet } from '../headers.js';
import { type FormNode, newNode } from '../model.js';
import type { SheetData } from '../workbook.js';
import { XlsFormProblem } from '../errors.js';
import { ENTITY_MESSAGES as M } from './messages.js';

export const ENTITY_COLUMNS: ReadonlySet<string> = new Set(['dataset', 'entity_id', 'create_if', 'update_if', 'repeat', 'label']);
const ENTITY_ALIASES = { list_name: 'dataset' } as const;
/** Names in the entities sheet and in save_to must not start with this (reserved for the server). */
export const RESERVED_PREFIX = '__';

export interface EntityDeclaration {
  dataset: string;
  row: number;
  entityId?: string;
  createIf?: string;
  updateIf?: string;
  label?: string;
  /** Question names the expressions refer to with `${...}`. */
  references: Set<string>;
}

function validateDatasetName(dataset: string | undefined, row: number): asserts dataset is string {
  if (!dataset) throw new XlsFormProblem(M.missingList(row));
  if (dataset.startsWith(RESERVED_PREFIX)) throw new XlsFormProblem(M.reservedPrefix('entities', row, 'dataset'));
  if (dataset.includes('.')) throw new XlsFormProblem(M.period('entities', row, 'dataset'));
  if (!isXmlTag(dataset)) throw new XlsFormProblem(M.notXmlName('entities', row, 'dataset'));
}

/** The declarations of the entities sheet, by list name in sheet order; throws on the first bad row. */
export function readEntityDeclarations(sheet: SheetData): Map<string, EntityDeclaration> {
  const grouped = groupSheet('entities', sheet, ENTITY_ALIASES, ENTITY_COLUMNS, { defaultLanguage: 'default' });
  const out = new Map<string, EntityDeclaration>();
  for (const { row, data } of grouped.rows) {
    const extra = Object.keys(data).filter((k) => !ENTITY_COLUMNS.has(k));
    if (extra.length > 0) throw new XlsFormProblem(M.unknownColumns(extra));
    const text = (k: string) => (typeof data[k] === 'string' && data[k] !== '' ? (data[k] as string) : undefined);
    const dataset = text('dataset');
    const decl: EntityDeclaration = { dataset: dataset ?? '', row, entityId: text('entity_id'), createIf: text('create_if'), updateIf: text('update_if'), label: text('label'), references: new Set() };
    validateDatasetName(dataset, row);
    if (!decl.entityId && decl.updateIf) throw new XlsFormProblem(M.missingEntityId(row, dataset));
    if (decl.entityId && decl.createIf && !decl.updateIf) throw new XlsFormProblem(M.missingUpdateIf(row, dataset));
    if (!decl.entityId && !decl.label) throw new XlsFormProblem(M.missingLabel(row, dataset));
    for (const expr of [decl.entityId, decl.createIf, decl.updateIf, decl.label]) {
      if (expr === undefined) continue;
      try {
        for (const ref of parseReferences(expr)) decl.references.add(ref.name);
      } catch (err) {
        // A malformed `${` is reported with its column by the reference check of every sheet.
        if (!(err instanceof MalformedReference)) throw err;
      }
    }
    if (out.has(dataset)) throw new XlsFormProblem(M.duplicateList(row));
    out.set(dataset, decl);
  }
  return out;
}

const readonlyString = (calculate?: string): Record<string, string> =>
  calculate === undefined ? { readonly: 'true()', type: 'string' } : { calculate, readonly: 'true()', type: 'string' };

function attribute(name: string, value?: string, bind?: Record<string, string>): FormNode {
  const node = newNode('attribute', `@${name}`, 'attribute');
  node.value = value;
  if (bind) node.bind = bind;
  return node;
}

/**
 * The `entity` element of one declaration, as pyxform writes it: `dataset`, then `create` (a
 * calculate when create_if is given), then for updates `update`, `baseVersion`, `trunkVersion`
 * and `branchId` read from the entity list, then `id` (a new uuid() when creating, entity_id when
 * updating), then the `label` child.
 */
export function entityElement(decl: EntityDeclaration): FormNode {
  const entity = newNode('entity', 'entity', 'entity');
  const add = (child: FormNode) => {
    entity.children.push(child);
    child.parent = entity;
  };
  add(attribute('dataset', decl.dataset));
  const id = attribute('id', undefined, readonlyString());
  if (!decl.entityId || decl.createIf) {
    add(attribute('create', '1', decl.createIf ? readonlyString(decl.createIf) : undefined));
    if (!decl.entityId) id.actions.push({ name: 'setvalue', event: 'odk-instance-first-load', value: 'uuid()' });
  }
  if (decl.entityId) {
    add(attribute('update', '1', decl.updateIf ? readonlyString(decl.updateIf) : undefined));
    id.bind!.calculate = decl.entityId;
    const item = `instance('${decl.dataset}')/root/item[name=${decl.entityId}]`;
    add(attribute('baseVersion', undefined, readonlyString(`${item}/__version`)));
    add(attribute('trunkVersion', undefined, readonlyString(`${item}/__trunkVersion`)));
    add(attribute('branchId', undefined, readonlyString(`${item}/__branchId`)));
  }
  add(id);
  if (decl.label) {
    const label = newNode('question', 'label', 'calculate');
    label.bind = readonlyString(decl.label);
    add(label);
  }
  return entity;
}
