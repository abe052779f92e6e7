// begin/end group and repeat rows: repeat name checks, a jr:count that is not a plain
// reference becomes a calculate, table-list groups (pyxform's control handling).
import { rowPrefix, XlsFormProblem } from '../errors.js';
import { isReference } from '../expression.js';
import type { GroupedRow } from '../headers.js';
import { type FormNode, newNode } from '../model.js';
import { CONTROL_TYPES, QUESTION_TYPES } from '../question-types.js';
import { attach } from './cells.js';
import type { RowState } from './row-state.js';

/** A begin group/repeat row: `node` is attached and pushed on the stack. */
export function beginControl(s: RowState, node: FormNode, begin: RegExpExecArray, row: GroupedRow, rowNumber: number, appearance: string | undefined): void {
  const name = node.name;
  const type = node.type;
  const top = s.stack[s.stack.length - 1];
  const controlType = CONTROL_TYPES[begin[3]];
  if (controlType === 'repeat') {
    if (name === s.survey.instanceName) {
      throw new XlsFormProblem(
        `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value '${name}' is invalid. Repeat names must not be the same as the survey root (which defaults to 'data').`,
      );
    }
    if (s.repeatNames.has(name)) {
      throw new XlsFormProblem(
        `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value '${name}' is invalid. Repeat names must unique anywhere in the survey, at all levels of group or repeat nesting.`,
      );
    }
    s.repeatNames.add(name);
    if (!('label' in row) && !('media' in row)) {
      s.warnings.push(`${rowPrefix(rowNumber)} Repeat has no label: {'name': '${name}', 'type': '${type}'}`);
    }
  }
  if (controlType === 'loop') {
    // `begin loop over LIST`: one group per choice of LIST, filled in after the rows (loops.ts).
    const list = begin[6];
    if (!list) throw new XlsFormProblem(`${rowPrefix(rowNumber)} Repeat loop without list name.`);
    if (!s.survey.choices.has(list)) throw new XlsFormProblem(`${rowPrefix(rowNumber)} List name not in columns sheet: ${list}`);
    node.listName = list;
  }
  node.kind = controlType === 'loop' ? 'group' : controlType;
  node.type = controlType;
  node.control = { ...(node.control ?? {}) };
  // An `intent` column on a group row launches an external app for the group (pyxform).
  if (typeof row.intent === 'string' && row.intent !== '') node.control.intent = row.intent;
  if (Object.keys(node.control).length === 0) delete node.control;
  const count = node.control?.['jr:count'];
  if (count && !isReference(count)) {
    const countNode = newNode('question', `${name}_count`, 'calculate');
    countNode.row = rowNumber;
    countNode.bind = { type: 'string', readonly: 'true()', calculate: count };
    attach(top.node, countNode);
    node.control!['jr:count'] = `\${${name}_count}`;
  }
  if (appearance && appearance.split(/\s+/).includes('table-list')) {
    s.tableList = true;
    node.control!.appearance = ['field-list', ...appearance.split(/\s+/).filter((w) => w !== 'table-list')].join(' ');
    if (node.label !== undefined || node.hint !== undefined) {
      const note = newNode('question', `generated_table_list_label_${rowNumber}`, 'note');
      note.row = rowNumber;
      note.label = node.label;
      note.hint = node.hint;
      note.bind = { ...QUESTION_TYPES.note.bind };
      note.control = { ...QUESTION_TYPES.note.control! };
      delete node.label;
      delete node.hint;
      node.children.push(note);
      note.parent = node;
    }
  }
  if (node.bind && Object.keys(node.bind).length === 0) delete node.bind;
  attach(top.node, node);
  // 'meta' is reserved in every container, not only at the survey level (pyxform's unique names check).
  s.stack.push({ node, controlType, childNames: new Set(['meta']), childNamesLower: new Set(), row: rowNumber });
}
