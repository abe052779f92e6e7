// Checks of one survey row that pyxform makes while it reads: audit names, unique names within
// a parent, trigger references; and where a triggered question is recorded.
import { rowPrefix, XlsFormProblem } from '../errors.js';
import { isReference, MalformedReference, parseReferences } from '../expression.js';
import { descendants, type FormNode, type Survey } from '../model.js';
import type { RowState, StackEntry } from './row-state.js';

const GEO_TYPES = new Set(['geopoint', 'geotrace', 'geoshape']);

export function validateAuditName(name: string, row: number): string {
  if (name !== '' && name !== 'audit') {
    throw new XlsFormProblem(`${rowPrefix(row)} Audits must always be named 'audit.' The name column should be left blank.`);
  }
  return 'audit';
}

export function checkUniqueName(name: string, top: StackEntry, row: number, warnings: string[]): void {
  if (top.childNames.has(name)) {
    if (name === 'meta') throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'name' value 'meta' is invalid. The name 'meta' is reserved for form metadata.`);
    throw new XlsFormProblem(
      `${rowPrefix(row)} On the 'survey' sheet, the 'name' value '${name}' is invalid. Questions, groups, and repeats must be unique within their nearest parent group or repeat, or the survey if not inside a group or repeat.`,
    );
  }
  top.childNames.add(name);
  const lower = name.toLowerCase();
  if (top.childNamesLower.has(lower)) {
    warnings.push(
      `${rowPrefix(row)} On the 'survey' sheet, the 'name' value '${name}' is problematic. The name is a case-insensitive match to another name. Questions, groups, and repeats should be unique within the nearest parent group or repeat, or the survey if not inside a group or repeat. Some data processing tools are not case-sensitive, so the current names may make analysis difficult.`,
    );
  }
  top.childNamesLower.add(lower);
}


export function parseTrigger(trigger: string | undefined, row: number, refs: Array<[string, number]>): string[] | undefined {
  if (!trigger) return undefined;
  const bad = () =>
    new XlsFormProblem(`[row : ${row}] On the 'survey' sheet, the 'trigger' value is invalid. Reference variables must start with '\${', then a question name, and end with '}'.`);
  if (!trigger.includes('${')) throw bad();
  const names: string[] = [];
  for (const part of trigger.split(',')) {
    let parsed;
    try {
      parsed = parseReferences(part.trim());
    } catch (e) {
      if (e instanceof MalformedReference) throw bad();
      throw e;
    }
    if (parsed.length > 1) {
      throw new XlsFormProblem(`[row : ${row}] On the 'survey' sheet, the 'trigger' value is invalid. Reference variable lists must have a comma between each variable.`);
    }
    for (const r of parsed) names.push(r.name);
  }
  for (const n of names) refs.push([n, row]);
  return names.length > 0 ? names : undefined;
}

// A question with a trigger is set by a setvalue (or odk:setgeopoint) in the body control of each triggering question.
export function saveTrigger(node: FormNode, survey: Survey): void {
  if (!node.trigger) return;
  const byTrigger = node.type === 'background-geopoint' ? survey.setgeopointByTrigger : survey.setvaluesByTrigger;
  const calculation = node.bind?.calculate;
  for (const t of node.trigger) byTrigger.set(t, [...(byTrigger.get(t) ?? []), [node.name, typeof calculation === 'string' ? calculation : '']]);
}

const REFERENCE_GEOMETRY = (row: number | undefined) =>
  `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'reference-geometry' parameter must either match a secondary instance name (a choices list_name, an entities list_name, or the base name of an attached file), or be a reference variable containing the name of a repeat.`;

/**
 * A geo question's `reference-geometry` must name a secondary instance (a choice list, an entity
 * list, an external file's base name) or be `${repeat}`; checked after all rows, as pyxform.
 */
export function validateReferenceGeometry(s: RowState, errors: string[]): void {
  for (const node of descendants(s.survey.root)) {
    if (node.kind !== 'question' || !GEO_TYPES.has(node.type) || node.itemset === undefined) continue;
    const target = node.itemset;
    if (s.secondaryNames.has(target) || s.survey.choices.has(target) || s.entities.hasList(target)) continue;
    const whole = /^\$\{([^}]*)\}$/.exec(target.trim());
    if (whole && isReference(target.trim()) && s.repeatNames.has(whole[1].trim())) continue;
    errors.push(REFERENCE_GEOMETRY(node.row));
  }
}
