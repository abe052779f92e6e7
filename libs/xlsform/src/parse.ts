// Spreadsheet rows to the form tree, following pyxform's xls2json: settings, choices,
// begin/end of groups and repeats, select types, or_other, parameters of each type, the
// meta block. Problems in one row are collected with the row number and the next row is
// read, so an author sees every broken row at once.
import { XlsFormProblem, rowPrefix } from './errors.js';
import { defaultIsDynamic, hasReference, isReference, isXmlTag, MalformedReference, parseReferences } from './expression.js';
import { type Cell, type GroupedRow, groupSheet, type GroupedSheet } from './headers.js';
import { type Choice, type ChoiceList, type FormNode, newNode, type Survey, type Translatable } from './model.js';
import {
  CHOICES_COLUMNS, CHOICES_HEADER_ALIASES, CONTROL_TYPES, EXTERNAL_FILE_EXTENSIONS, QUESTION_TYPES, SELECT_COMMANDS, SELECT_FROM_FILE,
  SETTINGS_ALIASES, SETTINGS_COLUMNS, SETTINGS_HEADER_ALIASES, SURVEY_COLUMNS, SURVEY_HEADER_ALIASES, TYPE_ALIASES, YES_NO,
} from './question-types.js';
import type { WorkbookData } from './workbook.js';

export interface ParseOutcome {
  survey?: Survey;
  errors: string[];
  warnings: string[];
  /** Rows of the external_choices sheet as CSV (`itemsets.csv` for select_one_external). */
  itemsetsCsv?: string;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const controlAlt = Object.keys(CONTROL_TYPES).map(escapeRe).join('|');
const RE_BEGIN = new RegExp(`^(begin)(\\s|_)(${controlAlt})( (over )?(\\S+))?$`);
const RE_END = new RegExp(`^(end)(\\s|_)(${controlAlt})$`);
const RE_SELECT = new RegExp(
  `^(${Object.keys(SELECT_COMMANDS).map(escapeRe).join('|')}) (\\S+)( (or specify other|or_other|or other))?$`,
);

const str = (c: Cell | undefined): string | undefined => (typeof c === 'string' ? c : undefined);
const translatable = (c: Cell | undefined): Translatable | undefined => {
  if (c === undefined) return undefined;
  if (typeof c === 'string') return c;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c)) if (typeof v === 'string') out[k] = v;
  return out;
};
const sub = (row: GroupedRow, key: string): Record<string, Cell> => {
  const v = row[key];
  return v !== undefined && typeof v !== 'string' ? v : {};
};

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

const SUPPORTED = new Set(['survey', 'choices', 'settings', 'external_choices', 'osm', 'entities']);
function misspelling(key: string, names: string[]): string | undefined {
  const candidates = names.filter((n) => levenshtein(n.toLowerCase(), key) <= 2 && !SUPPORTED.has(n) && !n.startsWith('_'));
  if (candidates.length === 0) return undefined;
  return `When looking for a sheet named '${key}', the following sheets with similar names were found: ${candidates.map((c) => `'${c}'`).join(', ')}.`;
}

function csvCell(v: string): string {
  return `"${v.replace(/"/g, '""')}"`;
}

interface StackEntry {
  node: FormNode;
  controlType: 'group' | 'repeat' | null;
  childNames: Set<string>;
  childNamesLower: Set<string>;
  row?: number;
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

function build(workbook: WorkbookData, opts: { fallbackFormName?: string }, errors: string[], warnings: string[]): Survey | undefined {
  const sheetNames = workbook.sheetNames;
  const surveySheet = workbook.sheets.survey;
  if (!surveySheet) {
    const similar = misspelling('survey', sheetNames);
    throw new XlsFormProblem(`You must have a sheet named 'survey'. ${similar ?? ''}`.trim());
  }

  // Settings
  let settings: GroupedRow = {};
  const settingsSheet = workbook.sheets.settings;
  if (settingsSheet) {
    const grouped = groupSheet('settings', settingsSheet, SETTINGS_HEADER_ALIASES, SETTINGS_COLUMNS, { defaultLanguage: 'default' });
    settings = grouped.rows[0]?.data ?? {};
    const name = str(settings.name);
    if (name !== undefined && !isXmlTag(name)) {
      throw new XlsFormProblem(
        "[row : 1] On the 'settings' sheet, the 'name' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.",
      );
    }
  } else {
    const similar = misspelling('settings', sheetNames);
    if (similar) warnings.push(`${similar} If you do not mean to include a sheet, to suppress this message, prefix the sheet name with an underscore. For example 'setting' becomes '_setting'.`);
  }
  const yes = (key: string, dflt: boolean) => {
    const v = str(settings[key]);
    return v === undefined ? dflt : (YES_NO[v] ?? dflt);
  };
  const defaultLanguage = str(settings.default_language) ?? 'default';
  const idString = str(settings.id_string) ?? opts.fallbackFormName ?? 'data';
  const survey: Survey = {
    root: newNode('survey', str(settings.name) ?? 'data', 'survey'),
    instanceName: str(settings.name) ?? 'data',
    idString,
    title: str(settings.title) ?? idString,
    version: str(settings.version),
    defaultLanguage,
    publicKey: str(settings.public_key),
    submissionUrl: str(settings.submission_url),
    autoSend: str(settings.auto_send),
    autoDelete: str(settings.auto_delete),
    style: str(settings.style),
    namespaces: str(settings.namespaces),
    choices: new Map(),
    setvaluesByTrigger: new Map(),
    setgeopointByTrigger: new Map(),
  };

  // Choices
  const choiceRows = new Map<string, Array<{ row: number; data: GroupedRow }>>();
  let choicesGrouped: GroupedSheet | undefined;
  if (workbook.sheets.choices) {
    choicesGrouped = groupSheet('choices', workbook.sheets.choices, CHOICES_HEADER_ALIASES, CHOICES_COLUMNS, {
      defaultLanguage,
      required: ['name'],
    });
    const invalidHeaders = new Set<string>();
    for (const tokens of choicesGrouped.headers) {
      const h = tokens[0];
      if (h !== 'list name' && (h.includes(' ') || h === '')) {
        warnings.push(
          `[row : 1] On the 'choices' sheet, the '${h}' value is invalid. Column headers must not be empty and must not contain spaces. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
        );
        invalidHeaders.add(h);
      }
    }
    for (const r of choicesGrouped.rows) {
      const list = str(r.data['list name']);
      if (list === undefined) continue;
      for (const h of invalidHeaders) delete r.data[h];
      if (!choiceRows.has(list)) choiceRows.set(list, []);
      choiceRows.get(list)!.push(r);
    }
    const allowDuplicates = yes('allow_choice_duplicates', false);
    for (const [list, rows] of choiceRows) {
      const seen = new Set<string>();
      const duplicates: string[] = [];
      for (const r of rows) {
        const name = str(r.data.name);
        if (name === undefined) {
          throw new XlsFormProblem(
            `[row : ${r.row}] On the 'choices' sheet, the 'name' value is invalid. Choices must have a name. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
          );
        }
        if (r.data.label === undefined) {
          warnings.push(`[row : ${r.row}] On the 'choices' sheet, the 'label' value is invalid. Choices should have a label. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`);
        }
        if (!allowDuplicates) {
          if (seen.has(name)) {
            duplicates.push(
              `[row : ${r.row}] On the 'choices' sheet, the 'name' value is invalid. Choice names must be unique for each choice list. If this is intentional, use the setting 'allow_choice_duplicates'. Learn more: https://xlsform.org/#choice-names.`,
            );
          } else seen.add(name);
        }
      }
      errors.push(...duplicates);
      survey.choices.set(list, makeChoiceList(list, rows));
    }
  }

  const external = new Set<string>();
  if (workbook.sheets.external_choices) {
    for (const r of workbook.sheets.external_choices.rows) {
      const list = r.cells.get('list_name') ?? r.cells.get('list name');
      if (list) external.add(list);
    }
  }

  // Survey
  const surveyGrouped = groupSheet('survey', surveySheet, SURVEY_HEADER_ALIASES, SURVEY_COLUMNS, {
    defaultLanguage,
    stripWhitespace: yes('clean_text_values', true),
    required: ['type'],
  });
  const translations = { survey: seenTranslations(surveyGrouped.headers, SURVEY_TRANSLATABLE), choices: seenTranslations(choicesGrouped?.headers ?? [], CHOICES_TRANSLATABLE) };
  const missing = missingTranslationsMessage(translations);
  if (missing) warnings.push(missing);
  const stack: StackEntry[] = [{ node: survey.root, controlType: null, childNames: new Set(['meta']), childNamesLower: new Set() }];
  const metaChildren: FormNode[] = [];
  const elementNames = new Map<string, number>();
  const questionNames = new Set<string>();
  const triggerRefs: Array<[string, number]> = [];
  const repeatNames = new Set<string>();
  let tableList: string | true | null = null;
  let orOtherSeen = false;

  for (const { row: rowNumber, data: row } of surveyGrouped.rows) {
    try {
      const top = stack[stack.length - 1];
      if (Object.keys(row).length === 0) continue;
      let type = str(row.type);
      if (type !== undefined && type in TYPE_ALIASES) type = TYPE_ALIASES[type];
      const control = sub(row, 'control');
      const appearance = str(control.appearance);
      if (!type) {
        if (!('name' in row) && !('label' in row)) {
          warnings.push(`${rowPrefix(rowNumber)} Row without name, text, or label is being skipped:\n${JSON.stringify(row)}`);
          continue;
        }
        throw new XlsFormProblem(`${rowPrefix(rowNumber)} Question with no type.`);
      }
      const settingKey = SETTINGS_ALIASES[type];
      if (settingKey) {
        if (settingKey === 'title') survey.title = str(row.name) ?? survey.title;
        if (settingKey === 'id_string') survey.idString = str(row.name) ?? survey.idString;
        continue;
      }
      const begin = RE_BEGIN.exec(type);
      const end = RE_END.exec(type);
      let name: string | undefined;
      if (type === 'audit') {
        // pyxform names the audit itself and files it under meta, before any name checks.
        name = validateAuditName(str(row.name) ?? '', rowNumber);
      } else if (!end) {
        name = str(row.name);
        if (name === undefined) {
          if (type === 'note') name = `generated_note_name_${rowNumber}`;
          else throw new XlsFormProblem(`${rowPrefix(rowNumber)} Question or group with no name.`);
        }
        if (!isXmlTag(name)) {
          throw new XlsFormProblem(
            `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.`,
          );
        }
        elementNames.set(name, (elementNames.get(name) ?? 0) + 1);
        checkUniqueName(name, top, rowNumber, warnings);
      }

      if (end) {
        const controlType = CONTROL_TYPES[end[3]];
        if (top.controlType !== controlType || stack.length === 1) {
          throw new XlsFormProblem(
            `${rowPrefix(rowNumber)} Unmatched 'end_${controlType}'. No matching 'begin_${controlType}' was found for the name '${str(row.name) ?? 'unknown'}'.`,
          );
        }
        stack.pop();
        tableList = null;
        continue;
      }

      const node = newNode('question', name!, type);
      node.row = rowNumber;
      applyCommon(node, row);
      if ('trigger' in row) node.trigger = parseTrigger(str(row.trigger), rowNumber, triggerRefs);
      const parameters = parseParameters(str(row.parameters), rowNumber);

      if (begin) {
        const controlType = CONTROL_TYPES[begin[3]];
        if (controlType === 'repeat') {
          if (name === survey.instanceName) {
            throw new XlsFormProblem(
              `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value '${name}' is invalid. Repeat names must not be the same as the survey root (which defaults to 'data').`,
            );
          }
          if (repeatNames.has(name!)) {
            throw new XlsFormProblem(
              `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value '${name}' is invalid. Repeat names must unique anywhere in the survey, at all levels of group or repeat nesting.`,
            );
          }
          repeatNames.add(name!);
          if (!('label' in row) && !('media' in row)) {
            warnings.push(`${rowPrefix(rowNumber)} Repeat has no label: {'name': '${name}', 'type': '${type}'}`);
          }
        }
        node.kind = controlType;
        node.type = controlType;
        node.control = { ...(node.control ?? {}) };
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
          tableList = true;
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
        stack.push({ node, controlType, childNames: new Set(), childNamesLower: new Set(), row: rowNumber });
        continue;
      }

      if ('default' in row) {
        const dflt = str(row.default);
        if (dflt && defaultIsDynamic(dflt, type)) {
          node.dynamicDefault = true;
          node.actions.push({ name: 'setvalue', event: 'odk-instance-first-load' });
          if (stack.some((s) => s.controlType === 'repeat')) node.actions.push({ name: 'setvalue', event: 'odk-new-repeat' });
        }
      }

      if (type === 'audit') {
        finishQuestion(node, 'audit', rowNumber);
        applyAuditParameters(node, parameters, rowNumber);
        metaChildren.push(node);
        continue;
      }
      if (type === 'calculate' && !node.bind?.calculate && !node.dynamicDefault) {
        throw new XlsFormProblem(`${rowPrefix(rowNumber)} Missing calculation.`);
      }
      if (type === 'simserial' || type === 'subscriberid') {
        warnings.push(`${rowPrefix(rowNumber)} ${type} is no longer supported on most devices. Only old versions of Collect on Android versions older than 11 still support it.`);
      }

      questionNames.add(name!);
      const select = RE_SELECT.exec(type);
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
            const similar = misspelling('choices', sheetNames);
            throw new XlsFormProblem(
              `There should be a choices sheet in this xlsform.${similar ? ` ${similar}` : ''} Please ensure that the choices sheet has the mandatory columns 'list_name', 'name', and 'label'.`,
            );
          }
          throw new XlsFormProblem(`${rowPrefix(rowNumber)} List name not in choices sheet: ${listName}`);
        }
        const list = survey.choices.get(listName);
        if (selectType === 'select all that apply' && !EXTERNAL_FILE_EXTENSIONS.has(ext) && list) {
          const spaced = list.choices.find((c) => c.name.includes(' '));
          if (spaced) throw new XlsFormProblem(`Choice names with spaces cannot be added to multiple choice selects. See [${spaced.name}] in [${listName}]`);
        }
        let other: FormNode | undefined;
        if (select[4] !== undefined) {
          orOtherSeen = true;
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
        if (tableList !== null) {
          if (tableList === true) {
            tableList = listName;
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
          if (tableList !== listName) {
            throw new XlsFormProblem(`${rowPrefix(rowNumber)} Badly formatted table list, list names don't match: ${tableList} vs. ${listName}`);
          }
          node.control!.appearance = 'list-nolabel';
        }
        saveTrigger(node, survey);
        attach(top.node, node);
        if (other) attach(top.node, other);
        continue;
      }

      if (!(type in QUESTION_TYPES)) throw new XlsFormProblem(`${rowPrefix(rowNumber)} Unknown question type '${type}'.`);
      if (type === 'xml-external' || type === 'csv-external') {
        node.kind = 'external';
        attach(top.node, node);
        continue;
      }
      finishQuestion(node, type, rowNumber);
      applyTypeParameters(node, type, parameters, appearance, rowNumber, survey, warnings);
      if (node.bind && Object.keys(node.bind).length === 0) delete node.bind;
      if (node.control && Object.keys(node.control).length === 0) delete node.control;
      saveTrigger(node, survey);
      if (type === 'background-geopoint') {
        if (!node.trigger) throw new XlsFormProblem(`[row : ${rowNumber}] For 'background-geopoint' questions, the 'trigger' column must not be empty.`);
        if (node.bind?.calculate !== undefined) throw new XlsFormProblem(`[row : ${rowNumber}] For 'background-geopoint' questions, the 'calculation' column must be empty.`);
      }
      attach(top.node, node);
    } catch (err) {
      if (!(err instanceof XlsFormProblem)) throw err;
      errors.push(err.message);
    }
  }

  if (orOtherSeen && (!defaultOnly(translations.survey) || !defaultOnly(translations.choices))) {
    warnings.push(
      "This form uses or_other and translations, which is not recommended. An untranslated input question label and choice label is generated for 'other'. Learn more: https://xlsform.org/en/#specify-other).",
    );
  }
  for (const [target, row] of triggerRefs) {
    if (!questionNames.has(target)) {
      errors.push(`[row : ${row}] On the 'survey' sheet, the 'trigger' value is invalid. Reference variables must contain a name from the 'survey' sheet. Could not find the name '${target}'.`);
    }
  }
  if (stack.length > 1) {
    const open = stack[stack.length - 1];
    errors.push(`${rowPrefix(open.row)} Unmatched 'begin_${open.controlType}'. No matching 'end_${open.controlType}' was found for the name '${open.node.name}'.`);
  }

  if (!yes('omit_instanceID', false)) {
    const instanceId = newNode('question', 'instanceID', 'calculate');
    instanceId.bind = { type: 'string', readonly: 'true()', 'jr:preload': str(settings.instance_id) ?? 'uid' };
    metaChildren.push(instanceId);
    elementNames.set('instanceID', (elementNames.get('instanceID') ?? 0) + 1);
  } else if (survey.publicKey) {
    errors.push('Cannot omit instanceID, it is required for encryption.');
  }
  const instanceName = str(settings.instance_name);
  if (instanceName !== undefined) {
    const n = newNode('question', 'instanceName', 'calculate');
    n.bind = { type: 'string', calculate: instanceName };
    metaChildren.push(n);
  }
  if (metaChildren.length > 0) {
    const meta = newNode('group', 'meta', 'group');
    meta.bodyless = true;
    for (const c of metaChildren) attach(meta, c);
    attach(survey.root, meta);
  }

  validateReferences(workbook, surveyGrouped, choicesGrouped, elementNames, errors);
  return survey;
}

// A question with a trigger is set by a setvalue (or odk:setgeopoint) in the body control of each triggering question.
function saveTrigger(node: FormNode, survey: Survey): void {
  if (!node.trigger) return;
  const byTrigger = node.type === 'background-geopoint' ? survey.setgeopointByTrigger : survey.setvaluesByTrigger;
  const calculation = node.bind?.calculate;
  for (const t of node.trigger) byTrigger.set(t, [...(byTrigger.get(t) ?? []), [node.name, typeof calculation === 'string' ? calculation : '']]);
}

// Translatable columns per sheet, under the names pyxform's missing-translation warning uses.
const SURVEY_TRANSLATABLE: Readonly<Record<string, string>> = {
  label: 'label', hint: 'hint', guidance_hint: 'guidance_hint', image: 'image', 'big-image': 'big-image', audio: 'audio', video: 'video',
  'jr:constraintMsg': 'constraint_message', 'jr:requiredMsg': 'required_message',
};
const CHOICES_TRANSLATABLE: Readonly<Record<string, string>> = { label: 'label', image: 'image', 'big-image': 'big-image', audio: 'audio', video: 'video' };

/** Language -> translatable columns present for it ('default' for columns without a language). */
function seenTranslations(headers: string[][], translatable: Readonly<Record<string, string>>): Map<string, Set<string>> {
  const seen = new Map<string, Set<string>>();
  for (const header of headers) {
    const head = header.length > 1 && (header[0] === 'media' || header[0] === 'bind') ? header.slice(1) : header;
    const name = translatable[head[0]];
    if (name === undefined || head.length > 2) continue;
    const lang = head.length === 1 ? 'default' : head[1];
    if (!seen.has(lang)) seen.set(lang, new Set());
    seen.get(lang)!.add(name);
  }
  return seen;
}

function defaultOnly(seen: Map<string, Set<string>>): boolean {
  return seen.size === 0 || (seen.size === 1 && seen.has('default'));
}

// pyxform's warning when a language lacks a translatable column that another language has.
function missingTranslationsMessage(sheets: Record<'survey' | 'choices', Map<string, Set<string>>>): string | undefined {
  const lines: string[] = [];
  for (const sheet of ['survey', 'choices'] as const) {
    const seen = sheets[sheet];
    if (defaultOnly(seen)) continue;
    const all = new Set([...seen.values()].flatMap((s) => [...s]));
    for (const lang of [...seen.keys()].sort()) {
      const cols = [...all].filter((c) => !seen.get(lang)!.has(c)).sort();
      if (cols.length === 1) lines.push(`Language '${lang}' is missing the ${sheet} ${cols[0]} column.`);
      if (cols.length > 1) lines.push(`Language '${lang}' is missing the ${sheet} columns ${cols.join(', ')}.`);
    }
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}

function attach(parent: FormNode, child: FormNode): void {
  parent.children.push(child);
  child.parent = parent;
}

function validateAuditName(name: string, row: number): string {
  if (name !== '' && name !== 'audit') {
    throw new XlsFormProblem(`${rowPrefix(row)} Audits must always be named 'audit.' The name column should be left blank.`);
  }
  return 'audit';
}

function checkUniqueName(name: string, top: StackEntry, row: number, warnings: string[]): void {
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

/** Label, hint, media, bind, control and the other columns shared by every row kind. */
function applyCommon(node: FormNode, row: GroupedRow): void {
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
function finishQuestion(node: FormNode, type: string, row: number): void {
  const def = QUESTION_TYPES[type];
  if (!def) throw new XlsFormProblem(`${rowPrefix(row)} Unknown question type '${type}'.`);
  node.type = type;
  if (def.bind) node.bind = { ...def.bind, ...(node.bind ?? {}) };
  if (def.control) node.control = { ...def.control, ...(node.control ?? {}) };
  if (node.control?.appearance === 'label' && !node.label) node.label = ' ';
}

function parseTrigger(trigger: string | undefined, row: number, refs: Array<[string, number]>): string[] | undefined {
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

const RE_PARAMETER_PAIR = /([^\s=,;]+)\s*=\s*([^\s=,;]+)/y;
const RE_PARAMETER_SEP = /[\s,;]*/y;

/** `key=value` pairs separated by spaces, commas or semicolons; keys lower case, values too except label/value. */
export function parseParameters(raw: string | undefined, row: number): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw || !raw.trim()) return out;
  let i = 0;
  while (i < raw.length) {
    RE_PARAMETER_SEP.lastIndex = i;
    RE_PARAMETER_SEP.exec(raw);
    i = RE_PARAMETER_SEP.lastIndex;
    if (i >= raw.length) break;
    RE_PARAMETER_PAIR.lastIndex = i;
    const m = RE_PARAMETER_PAIR.exec(raw);
    if (!m) throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. Parameters must be in the form of 'key1=value1 key2=value2.`);
    const key = m[1].toLowerCase();
    out[key] = key === 'label' || key === 'value' ? m[2] : m[2].toLowerCase();
    i = RE_PARAMETER_PAIR.lastIndex;
  }
  return out;
}

function validateParameterKeys(parameters: Record<string, string>, accepted: string[], row: number): void {
  const rejected = Object.keys(parameters).filter((k) => !accepted.includes(k)).sort();
  if (rejected.length > 0) {
    throw new XlsFormProblem(
      `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The accepted parameter keys for this question type are '${[...accepted].sort().join(', ')}'. The following are invalid parameter key(s): '${rejected.join(', ')}'.`,
    );
  }
}

const numeric = (v: string) => v.trim() !== '' && Number.isFinite(Number(v));

function applyAuditParameters(node: FormNode, p: Record<string, string>, row: number): void {
  validateParameterKeys(p, ['identify-user', 'location-max-age', 'location-min-interval', 'location-priority', 'track-changes', 'track-changes-reasons'], row);
  const bind = node.bind!;
  if ('track-changes' in p) {
    if (!['true', 'false'].includes(p['track-changes'])) throw new XlsFormProblem(`track-changes must be set to true or false: '${p['track-changes']}' is an invalid value.`);
    bind['odk:track-changes'] = p['track-changes'];
  }
  if ('track-changes-reasons' in p) {
    if (p['track-changes-reasons'] !== 'on-form-edit') throw new XlsFormProblem('track-changes-reasons must be set to on-form-edit');
    bind['odk:track-changes-reasons'] = 'on-form-edit';
  }
  if ('identify-user' in p) {
    if (!['true', 'false'].includes(p['identify-user'])) throw new XlsFormProblem(`identify-user must be set to true or false: '${p['identify-user']}' is an invalid value.`);
    bind['odk:identify-user'] = p['identify-user'];
  }
  const loc = ['location-priority', 'location-min-interval', 'location-max-age'];
  if (loc.some((k) => k in p)) {
    if (!loc.every((k) => k in p)) {
      throw new XlsFormProblem("To include location information in the audit, 'location-priority', 'location-min-interval', and 'location-max-age' are required parameters.");
    }
    if (!['no-power', 'low-power', 'balanced', 'high-accuracy'].includes(p['location-priority'])) {
      throw new XlsFormProblem(`Parameter location-priority must be set to no-power, low-power, balanced, or high-accuracy:'${p['location-priority']}' is an invalid value`);
    }
    for (const k of ['location-min-interval', 'location-max-age']) {
      if (!/^-?\d+$/.test(p[k])) throw new XlsFormProblem(`Parameter ${k} must have an integer value.`);
      if (Number(p[k]) < 0) throw new XlsFormProblem(`Parameter ${k} must be greater than or equal to zero.`);
    }
    if (Number(p['location-max-age']) < Number(p['location-min-interval'])) {
      throw new XlsFormProblem('Parameter location-max-age must be greater than or equal to location-min-interval.');
    }
    bind['odk:location-max-age'] = p['location-max-age'];
    bind['odk:location-min-interval'] = p['location-min-interval'];
    bind['odk:location-priority'] = p['location-priority'];
  }
}

function applyTypeParameters(
  node: FormNode,
  type: string,
  p: Record<string, string>,
  appearance: string | undefined,
  row: number,
  survey: Survey,
  warnings: string[],
): void {
  const bind = node.bind ?? (node.bind = {});
  const control = node.control ?? (node.control = {});
  switch (type) {
    case 'range':
      applyRange(node, p, appearance, row, survey);
      return;
    case 'text':
      validateParameterKeys(p, ['rows'], row);
      if ('rows' in p) {
        if (!/^-?\d+$/.test(p.rows)) throw new XlsFormProblem(`${rowPrefix(row)} Parameter rows must have an integer value.`);
        control.rows = p.rows;
      }
      return;
    case 'photo':
      if (node.default && !node.default.includes('jr://images/')) node.default = `jr://images/${node.default}`;
      validateParameterKeys(p, ['app', 'max-pixels'], row);
      if ('max-pixels' in p) {
        if (!/^-?\d+$/.test(p['max-pixels'])) throw new XlsFormProblem('Parameter max-pixels must have an integer value.');
        bind['orx:max-pixels'] = p['max-pixels'];
      } else {
        warnings.push(`${rowPrefix(row)} Use the max-pixels parameter to speed up submission sending and save storage space. Learn more: https://xlsform.org/#image`);
      }
      if ('app' in p && (appearance === undefined || appearance === 'annotate')) control.intent = p.app;
      return;
    case 'audio':
    case 'background-audio': {
      validateParameterKeys(p, ['quality'], row);
      const allowed = type === 'audio' ? ['voice-only', 'low', 'normal', 'external'] : ['voice-only', 'low', 'normal'];
      if ('quality' in p && !allowed.includes(p.quality)) throw new XlsFormProblem('Invalid value for quality.');
      if (type === 'audio') {
        if ('quality' in p) bind['odk:quality'] = p.quality;
      } else {
        node.actions.push({ name: 'odk:recordaudio', event: 'odk-instance-load', quality: p.quality });
      }
      return;
    }
    case 'geopoint':
    case 'geoshape':
    case 'geotrace': {
      if (type === 'geopoint') {
        validateParameterKeys(p, ['allow-mock-accuracy', 'capture-accuracy', 'reference-geometry', 'warning-accuracy'], row);
        if ('capture-accuracy' in p) {
          if (!numeric(p['capture-accuracy'])) throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'capture-accuracy' parameter must have a numeric value.`);
          control.accuracyThreshold = p['capture-accuracy'];
        }
        if ('warning-accuracy' in p) {
          if (!numeric(p['warning-accuracy'])) throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'warning-accuracy' parameter must have a numeric value.`);
          control.unacceptableAccuracyThreshold = p['warning-accuracy'];
        }
      } else {
        validateParameterKeys(p, ['allow-mock-accuracy', 'incremental', 'reference-geometry'], row);
        if ('incremental' in p) {
          if (YES_NO[p.incremental] !== true) {
            throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For geoshape and geotrace questions, the 'incremental' parameter may either be 'true' or not included.`);
          }
          control.incremental = 'true';
        }
      }
      if ('allow-mock-accuracy' in p) {
        if (!['true', 'false'].includes(p['allow-mock-accuracy'])) {
          throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'allow-mock-accuracy' parameter must be either 'true' or 'false'.`);
        }
        bind['odk:allow-mock-accuracy'] = p['allow-mock-accuracy'];
      }
      if ('reference-geometry' in p) node.itemset = p['reference-geometry'];
      return;
    }
    case 'start-geopoint':
      node.actions.push({ name: 'odk:setgeopoint', event: 'odk-instance-first-load' });
      return;
  }
}

function applyRange(node: FormNode, p: Record<string, string>, appearance: string | undefined, row: number, survey: Survey): void {
  validateParameterKeys(p, ['end', 'placeholder', 'start', 'step', 'tick_interval', 'tick_labelset'], row);
  const problem = (name: string, what: string) => new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameter '${name}' ${what}`);
  if (appearance && !appearance.includes('vertical') && !appearance.includes('no-ticks') && ['tick_interval', 'placeholder', 'tick_labelset'].some((k) => k in p)) {
    throw new XlsFormProblem(
      `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameters 'tick_interval', 'placeholder', and 'tick_labelset' are only supported for the appearances 'vertical', 'no-ticks', 'vertical no-ticks', and the default (empty) horizontal.`,
    );
  }
  for (const [k, v] of [['start', '1'], ['end', '10'], ['step', '1']]) if (!(k in p)) p[k] = v;
  const num = (name: string): number | undefined => {
    if (!(name in p)) return undefined;
    if (!numeric(p[name])) throw problem(name, 'must be a number.');
    return Number(p[name]);
  };
  const start = num('start')!;
  const end = num('end')!;
  const step = num('step')!;
  const tick = num('tick_interval');
  const placeholder = num('placeholder');
  const width = Math.abs(end - start);
  const isMultiple = (a: number, b: number) => Math.abs(a / b - Math.round(a / b)) < 1e-9;
  if (step === 0) throw problem('step', "must not be '0' (zero).");
  if (step > width) throw problem('step', "must not be larger than the range (the difference between 'start' and 'end').");
  const control = node.control!;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) out[k] = v;
  if (tick !== undefined) {
    if (tick === 0) throw problem('tick_interval', "must not be '0' (zero).");
    if (tick > width) throw problem('tick_interval', "must not be larger than the range (the difference between 'start' and 'end').");
    if (!isMultiple(tick, step)) throw problem('tick_interval', "must be a multiple of 'step'.");
    delete out.tick_interval;
    out['odk:tick-interval'] = p.tick_interval;
  }
  if (placeholder !== undefined) {
    if (!isMultiple(placeholder - start, step)) throw problem('placeholder', "must be a multiple of 'step'.");
    if (placeholder < Math.min(start, end) || placeholder > Math.max(start, end)) throw problem('placeholder', "must be between the 'start' and 'end' values, inclusive.");
    delete out.placeholder;
    out['odk:placeholder'] = p.placeholder;
  }
  const labelset = p.tick_labelset;
  if (labelset) {
    const list = survey.choices.get(labelset);
    if (!list) {
      throw new XlsFormProblem(
        `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameter 'tick_labelset' must be a choice list name from the 'list_name' column on the choices sheet.`,
      );
    }
    for (const c of list.choices) {
      if (!numeric(c.name)) throw problem(labelset, 'choice values must all be numbers.');
      const v = Number(c.name);
      if (v < Math.min(start, end) || v > Math.max(start, end)) throw problem('tick_labelset', "choices must be between the 'start' and 'end' values, inclusive.");
    }
    delete out.tick_labelset;
    node.itemset = labelset;
  }
  if ([start, end, step, tick, placeholder].some((v) => v !== undefined && !Number.isInteger(v))) node.bind!.type = 'decimal';
  Object.assign(control, out);
  node.parameters = p;
}

function makeChoiceList(name: string, rows: Array<{ row: number; data: GroupedRow }>): ChoiceList {
  let requiresItext = false;
  const choices: Choice[] = rows.map(({ data }) => {
    const choice: Choice = { name: str(data.name) ?? '', extra: [] };
    choice.label = translatable(data.label);
    const media = data.media;
    if (media !== undefined && typeof media !== 'string') {
      choice.media = {};
      for (const [k, v] of Object.entries(media)) choice.media[k] = translatable(v)!;
    }
    for (const [k, v] of Object.entries(data)) {
      if (['name', 'label', 'media', 'list name'].includes(k)) continue;
      if (typeof v === 'string') choice.extra.push([k, v]);
    }
    if (!requiresItext && (choice.media || (choice.label !== undefined && (typeof choice.label !== 'string' || hasReference(choice.label))))) {
      requiresItext = true;
    }
    return choice;
  });
  return { name, choices, requiresItext, usedBySearch: false };
}

const PYREF_001 = (row: number, sheet: string, column: string) =>
  `[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Reference variables must start with '\${', then a question name, and end with '}'.`;

function validateReferences(
  workbook: WorkbookData,
  survey: GroupedSheet,
  choices: GroupedSheet | undefined,
  elementNames: Map<string, number>,
  errors: string[],
): void {
  const check = (sheet: string, rows: Array<{ row: number; cells: Map<string, string> }>, skip: (header: string) => boolean) => {
    for (const { row, cells } of rows) {
      for (const [column, value] of cells) {
        if (skip(column) || !value.includes('${')) continue;
        let refs;
        try {
          refs = parseReferences(value);
        } catch (e) {
          if (!(e instanceof MalformedReference)) throw e;
          errors.push(PYREF_001(row, sheet, column));
          continue;
        }
        for (const ref of refs) {
          const count = elementNames.get(ref.name);
          if (count === undefined) {
            errors.push(`[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Reference variables must contain a name from the 'survey' sheet. Could not find the name '${ref.name}'.`);
          } else if (count !== 1) {
            errors.push(`[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Reference variables names must be unique anywhere in the 'survey'. The name '${ref.name}' appears more than once.`);
          }
        }
      }
    }
  };
  if (workbook.sheets.settings) check('settings', workbook.sheets.settings.rows, () => false);
  const surveySheet = workbook.sheets.survey!;
  const ignored = new Set(surveySheet.headers.filter((_, i) => ['type', 'name', 'trigger'].includes(survey.headers[i]?.[0] ?? '')));
  check('survey', surveySheet.rows, (h) => ignored.has(h));
  if (workbook.sheets.choices && choices) {
    const translatableCols = new Set(workbook.sheets.choices.headers.filter((_, i) => ['label', 'media'].includes(choices.headers[i]?.[0] ?? '')));
    check('choices', workbook.sheets.choices.rows, (h) => !translatableCols.has(h));
  }
}
