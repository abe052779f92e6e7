// The columns every survey row shares (label, hint, media, bind, control, default) and the
// type's own bind and control attributes.
import { rowPrefix, XlsFormProblem } from '../errors.js';
import type { Cell, GroupedRow } from '../headers.js';
import type { FormNode } from '../model.js';
import { QUESTION_TYPES } from '../question-types.js';
import { str, sub, translatable } from './cells.js';

function pythonRepr(v: Cell): string {
  if (typeof v === 'string') return v.includes("'") && !v.includes('"') ? `"${v}"` : `'${v.replace(/'/g, "\\'")}'`;
  return `{${Object.entries(v).map(([k, x]) => `${pythonRepr(k)}: ${pythonRepr(x)}`).join(', ')}}`;
}

/** Label, hint, media, bind, control and the other columns shared by every row kind. */
export function applyCommon(node: FormNode, row: GroupedRow): void {
  node.label = translatable(row.label);
  node.hint = translatable(row.hint);
  node.guidanceHint = translatable(row.guidance_hint);
  const media = row.media;
  if (typeof media === 'string' && media !== '') node.bareMedia = true;
  if (media !== undefined && typeof media !== 'string') {
    node.media = {};
    for (const [k, v] of Object.entries(media)) node.media[k] = translatable(v)!;
  }
  const bind = sub(row, 'bind');
  if (Object.keys(bind).length > 0) {
    node.bind = {};
    for (const [k, v] of Object.entries(bind)) node.bind[k] = translatable(v)!;
  }
  const control = sub(row, 'control');
  if (Object.keys(control).length > 0) {
    node.control = {};
    // A deeper header (`body:esri:style`) is written as pyxform writes a dict: its Python repr.
    for (const [k, v] of Object.entries(control)) node.control[k] = typeof v === 'string' ? v : pythonRepr(v);
  }
  const instanceAttrs = sub(row, 'instance');
  if (Object.keys(instanceAttrs).length > 0) {
    node.instanceAttrs = {};
    for (const [k, v] of Object.entries(instanceAttrs)) node.instanceAttrs[k] = typeof v === 'string' ? v : pythonRepr(v);
  }
  node.default = str(row.default);
  node.choiceFilter = str(row.choice_filter);
  if (node.control?.appearance === 'label' && !node.label) node.label = ' ';
}


/** Puts the type's own bind and control attributes first, then the row's (pyxform's Question constructor). */
export function finishQuestion(node: FormNode, type: string, row: number): void {
  const def = QUESTION_TYPES[type];
  if (!def) throw new XlsFormProblem(`${rowPrefix(row)} Unknown question type '${type}'.`);
  node.type = type;
  if (def.bind) node.bind = { ...def.bind, ...(node.bind ?? {}) };
  if (def.control) node.control = { ...def.control, ...(node.control ?? {}) };
  if (def.hint !== undefined && node.hint === undefined) node.hint = def.hint;
  if (node.control?.appearance === 'label' && !node.label) node.label = ' ';
}
