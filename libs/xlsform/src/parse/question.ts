// The columns every survey row shares (label, hint, media, bind, control, default) and the
// type's own bind and control attributes.
import { rowPrefix, XlsFormProblem } from '../errors.js';
import type { GroupedRow } from '../headers.js';
import type { FormNode } from '../model.js';
import { QUESTION_TYPES } from '../question-types.js';
import { str, sub, translatable } from './cells.js';

/** Label, hint, media, bind, control and the other columns shared by every row kind. */
export function applyCommon(node: FormNode, row: GroupedRow): void {
  node.label = translatable(row.label);
  node.hint = translatable(row.hint);
  node.guidanceHint = translatable(row.guidance_hint);
  const media = row.media;
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
    for (const [k, v] of Object.entries(control)) if (typeof v === 'string') node.control[k] = v;
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
