// Spreadsheet rows to the form tree, following pyxform's xls2json: the settings sheet, the
// choices sheet, the survey sheet row by row, the meta block, then the references between them
// (docs/xlsform.md, "Parsing").
import { EntityCollector } from '../entities/index.js';
import { XlsFormProblem } from '../errors.js';
import { newNode, type FormNode, type Survey } from '../model.js';
import type { WorkbookData } from '../workbook.js';
import { attach, csvCell, misspelling, str } from './cells.js';
import { externalListNames, readChoices } from './choices.js';
import { validateReferences } from './references.js';
import type { RowState } from './row-state.js';
import { addNoneOption } from './selects.js';
import { readSettings, type Settings } from './settings.js';
import { readSurveyRows } from './survey-rows.js';
import { validateReferenceGeometry } from './checks.js';
import { expandLoops } from './loops.js';

export { parseParameters } from './parameters.js';

export interface ParseOutcome {
  survey?: Survey;
  errors: string[];
  warnings: string[];
  /** Rows of the external_choices sheet as CSV (`itemsets.csv` for select_one_external). */
  itemsetsCsv?: string;
}

export function parseWorkbook(workbook: WorkbookData, opts: { fallbackFormName?: string } = {}): ParseOutcome {
  const errors: string[] = [];
  const warnings: string[] = [];
  try {
    const survey = build(workbook, opts, errors, warnings);
    const ext = workbook.sheets.external_choices;
    const itemsetsCsv = ext && ext.rows.length > 0
      ? [ext.headers.map(csvCell).join(','), ...ext.rows.filter((r) => r.cells.size > 0).map((r) => ext.headers.map((h) => csvCell(r.cells.get(h) ?? '')).join(','))].join('\r\n') + '\r\n'
      : undefined;
    return { survey: errors.length === 0 ? survey : undefined, errors, warnings, itemsetsCsv };
  } catch (err) {
    if (err instanceof XlsFormProblem) return { errors: [...errors, err.message], warnings };
    throw err;
  }
}

function build(workbook: WorkbookData, opts: { fallbackFormName?: string }, errors: string[], warnings: string[]): Survey {
  if (!workbook.sheets.survey) {
    const similar = misspelling('survey', workbook.sheetNames);
    throw new XlsFormProblem(`You must have a sheet named 'survey'. ${similar ?? ''}`.trim());
  }
  const { settings, survey } = readSettings(workbook, opts, warnings);
  const choicesGrouped = readChoices(workbook, survey, settings, errors, warnings);
  const entities = EntityCollector.read(workbook);
  if (!workbook.sheets.entities) {
    const similar = misspelling('entities', workbook.sheetNames);
    if (similar) warnings.push(`${similar} If you do not mean to include a sheet, to suppress this message, prefix the sheet name with an underscore. For example 'setting' becomes '_setting'.`);
  }
  const state: RowState = {
    workbook, survey, warnings,
    external: externalListNames(workbook),
    stack: [{ node: survey.root, controlType: null, childNames: new Set(['meta']), childNamesLower: new Set() }],
    metaChildren: [],
    elementNames: new Map(),
    questionNames: new Set(),
    triggerRefs: [],
    repeatNames: new Set(),
    tableList: null,
    orOtherSeen: false,
    entities,
    secondaryNames: new Set(),
  };
  const surveyGrouped = readSurveyRows(state, settings, choicesGrouped, errors);
  if (errors.length === 0) validateReferenceGeometry(state, errors);
  if (errors.length === 0) entities.apply(survey);
  addMeta(state, settings, errors);
  validateReferences(workbook, surveyGrouped, choicesGrouped, state.elementNames, errors);
  if (errors.length === 0) expandLoops(survey.root, survey);
  if (errors.length === 0 && settings.yes('add_none_option', false)) addNoneOption(survey);
  return survey;
}

/** The meta group: audit, instanceID (unless omitted) and instanceName. */
function addMeta(s: RowState, settings: Settings, errors: string[]): void {
  const { survey, metaChildren, elementNames } = s;
  const { yes, row } = settings;
  if (!yes('omit_instanceID', false)) {
    const instanceId = newNode('question', 'instanceID', 'calculate');
    instanceId.bind = { type: 'string', readonly: 'true()', 'jr:preload': str(row.instance_id) ?? 'uid' };
    metaChildren.push(instanceId);
    elementNames.set('instanceID', (elementNames.get('instanceID') ?? 0) + 1);
  } else if (survey.publicKey) {
    errors.push('Cannot omit instanceID, it is required for encryption.');
  }
  const instanceName = str(row.instance_name);
  if (instanceName !== undefined) {
    const n: FormNode = newNode('question', 'instanceName', 'calculate');
    n.bind = { type: 'string', calculate: instanceName };
    metaChildren.push(n);
  }
  if (metaChildren.length > 0) {
    // The survey-level entity block, when there is one, already opened the meta group.
    let meta = survey.root.children.find((c) => c.name === 'meta' && c.kind === 'group');
    if (!meta) {
      meta = newNode('group', 'meta', 'group');
      meta.bodyless = true;
      attach(survey.root, meta);
    }
    for (const c of metaChildren) attach(meta, c);
  }
}
