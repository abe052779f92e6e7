// select_one / select_multiple / select_*_from_file / select_one_external rows: list checks,
// or_other, parameters and table-list rows (pyxform's select handling).
import { rowPrefix, XlsFormProblem } from '../errors.js';
import { hasReference, isReference, isXmlTag } from '../expression.js';
import { type Choice, descendants, type FormNode, newNode, type Survey } from '../model.js';
import { EXTERNAL_FILE_EXTENSIONS, SELECT_COMMANDS, SELECT_FROM_FILE } from '../question-types.js';
import { attach, misspelling, splitext } from './cells.js';
import { saveTrigger } from './checks.js';
import { validateParameterKeys } from './parameters.js';
import { finishQuestion } from './question.js';
import type { RowState } from './row-state.js';

/** A select row (`select` is the match of the select type pattern): `node` is checked, completed and attached. */
export function readSelect(s: RowState, node: FormNode, select: RegExpExecArray, rowNumber: number, parameters: Record<string, string>): void {
  const { survey, workbook, warnings, external } = s;
  const name = node.name;
  const top = s.stack[s.stack.length - 1];
if (select) {
  const command = select[1];
  const selectType = SELECT_COMMANDS[command];
  const listName = select[2];
  const dot = listName.lastIndexOf('.');
  const ext = dot > 0 ? listName.slice(dot) : '';
  if (command in SELECT_FROM_FILE && (!EXTERNAL_FILE_EXTENSIONS.has(ext) || listName.slice(0, dot).includes('.'))) {
    throw new XlsFormProblem(
      `${rowPrefix(rowNumber)} File name for '${command} ${listName}' should end with one of the supported file extensions: '.xml', '.csv', '.geojson'`,
    );
  }
  if (selectType === 'select one external') {
    if (!node.choiceFilter) warnings.push(`${rowPrefix(rowNumber)} select one external is only meant for filtered selects.`);
    if (external.size === 0) {
      throw new XlsFormProblem(
        "There should be an external_choices sheet in this xlsform. Please ensure that the external_choices sheet has columns 'list name', and 'name'.",
      );
    }
    if (!external.has(listName)) throw new XlsFormProblem(`${rowPrefix(rowNumber)}List name not in external choices sheet: ${listName}`);
  } else if (!survey.choices.has(listName) && !EXTERNAL_FILE_EXTENSIONS.has(ext) && !hasReference(listName)) {
    if (survey.choices.size === 0 && !workbook.sheets.choices) {
      const similar = misspelling('choices', workbook.sheetNames);
      throw new XlsFormProblem(
        `There should be a choices sheet in this xlsform.${similar ? ` ${similar}` : ''} Please ensure that the choices sheet has the mandatory columns 'list_name', 'name', and 'label'.`,
      );
    }
    throw new XlsFormProblem(`${rowPrefix(rowNumber)} List name not in choices sheet: ${listName}`);
  }
  if (selectType !== 'select one external') s.secondaryNames.add(splitext(listName));
  const list = survey.choices.get(listName);
  if (selectType === 'select all that apply' && !EXTERNAL_FILE_EXTENSIONS.has(ext) && list) {
    const spaced = list.choices.find((c) => c.name.includes(' '));
    if (spaced) throw new XlsFormProblem(`Choice names with spaces cannot be added to multiple choice selects. See [${spaced.name}] in [${listName}]`);
  }
  let other: FormNode | undefined;
  if (select[4] !== undefined) {
    s.orOtherSeen = true;
    if (node.choiceFilter) throw new XlsFormProblem(`${rowPrefix(rowNumber)} Choice filter not supported with or_other.`);
    if (!list || list.choices.length === 0) throw new XlsFormProblem(`${rowPrefix(rowNumber)} Please specify choices for this 'or other' question.`);
    if (!list.choices.some((c) => c.name === 'other')) {
      const langs = new Set<string>();
      for (const c of list.choices) if (c.label !== undefined && typeof c.label !== 'string') for (const l of Object.keys(c.label)) langs.add(l);
      list.choices.push({ name: 'other', label: langs.size > 0 ? Object.fromEntries([...langs].map((l) => [l, 'Other'])) : 'Other', extra: [] });
    }
    other = newNode('question', `${name}_other`, 'text');
    other.row = rowNumber;
    other.label = 'Specify other.';
    other.bind = { type: 'string', relevant: `selected(../${name}, 'other')` };
    other.control = { tag: 'input' };
  }
  const accepted = command in SELECT_FROM_FILE ? ['label', 'randomize', 'seed', 'value'] : ['randomize', 'seed'];
  validateParameterKeys(parameters, accepted, rowNumber);
  for (const key of ['value', 'label'] as const) {
    if (command in SELECT_FROM_FILE && key in parameters && !isXmlTag(parameters[key])) {
      throw new XlsFormProblem(
        `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'parameters (${key})' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.`,
      );
    }
  }
  if ('randomize' in parameters) {
    if (!['true', 'false'].includes(parameters.randomize)) throw new XlsFormProblem(`randomize must be set to true or false: '${parameters.randomize}' is an invalid value`);
    if ('seed' in parameters && !isReference(parameters.seed) && Number.isNaN(Number(parameters.seed))) {
      throw new XlsFormProblem('seed value must be a number or a reference to another field.');
    }
  } else if ('seed' in parameters) {
    throw new XlsFormProblem('Parameters must include randomize=true to use a seed.');
  }
  node.parameters = parameters;
  finishQuestion(node, selectType, rowNumber);
  if (selectType === 'select one external') {
    node.query = listName;
  } else {
    node.itemset = listName;
    node.listName = listName;
  }
  if (s.tableList !== null) {
    if (s.tableList === true) {
      s.tableList = listName;
      if (node.choiceFilter !== undefined) throw new XlsFormProblem(`${rowPrefix(rowNumber)} Choice filter not supported for table-list appearance.`);
      const header = newNode('question', `reserved_name_for_field_list_labels_${rowNumber}`, selectType);
      header.row = rowNumber;
      header.itemset = listName;
      header.listName = listName;
      header.label = ' ';
      finishQuestion(header, selectType, rowNumber);
      header.control!.appearance = 'label';
      attach(top.node, header);
    }
    if (s.tableList !== listName) {
      throw new XlsFormProblem(`${rowPrefix(rowNumber)} Badly formatted table list, list names don't match: ${s.tableList} vs. ${listName}`);
    }
    node.control!.appearance = 'list-nolabel';
  }
  saveTrigger(node, survey);
  attach(top.node, node);
  if (other) attach(top.node, other);
}
}

const NONE_CONSTRAINT = "(.='none' or not(selected(., 'none')))";

/** pyxform's test for a list that already holds its none choice: exactly name `none`, label `None`, nothing else. */
function isNoneChoice(c: Choice): boolean {
  return c.name === 'none' && c.label === 'None' && (c.media === undefined || Object.keys(c.media).length === 0) && c.extra.length === 0;
}

// The `add_none_option` setting, as pyxform 4.5's builder applies it: each select_multiple that
// carries its list's choices gets the constraint that `none` excludes every other answer, and a
// `none` choice is added to that list (not to the written instance), so only the first
// select_multiple of each list gets the constraint; one without its list's choices (from a file,
// from a repeat, randomized without a choice filter) is refused (docs/xlsform.md, "Settings").
export function addNoneOption(survey: Survey): void {
  const added = new Set<string>();
  for (const node of descendants(survey.root)) {
    if (node.kind !== 'question' || node.type !== 'select all that apply') continue;
    const listName = node.listName ?? node.itemset ?? '';
    const list = survey.choices.get(listName);
    const dot = listName.lastIndexOf('.');
    const fromFile = dot > 0 && EXTERNAL_FILE_EXTENSIONS.has(listName.slice(dot));
    const carriesChoices = node.choiceFilter ? !fromFile && list !== undefined && list.choices.length > 0 : !(node.parameters.randomize === 'true' || fromFile || hasReference(listName));
    if (!carriesChoices || !list || list.choices.length === 0) throw new XlsFormProblem('There should be choices for this question.');
    if (added.has(listName) || list.choices.some(isNoneChoice)) continue;
    added.add(listName);
    const constraint = node.bind?.constraint;
    node.bind = { ...(node.bind ?? {}), constraint: typeof constraint === 'string' ? `${constraint} and ${NONE_CONSTRAINT}` : NONE_CONSTRAINT };
  }
}
