// The survey sheet, row by row, as pyxform's xls2json reads it: types and aliases, names and
// their checks, begin/end of groups and repeats, selects, parameters of each type. Problems in
// one row are collected with the row number and the next row is read, so an author sees every
// broken row at once.
import { rowPrefix, XlsFormProblem } from '../errors.js';
import { defaultIsDynamic, isXmlTag } from '../expression.js';
import { groupSheet, type GroupedSheet } from '../headers.js';
import { newNode } from '../model.js';
import { CHOICES_COLUMNS, CHOICES_HEADER_ALIASES, CONTROL_TYPES, QUESTION_TYPES, SELECT_COMMANDS, SETTINGS_ALIASES, SURVEY_COLUMNS, SURVEY_HEADER_ALIASES, TYPE_ALIASES } from '../question-types.js';
import { attach, splitext, str, sub } from './cells.js';
import { checkUniqueName, parseTrigger, saveTrigger, validateAuditName } from './checks.js';
import { beginControl } from './groups.js';
import { applyAuditParameters, applyTypeParameters, parseParameters } from './parameters.js';
import { applyCommon, finishQuestion } from './question.js';
import type { RowState } from './row-state.js';
import { readSelect } from './selects.js';
import type { Settings } from './settings.js';
import { CHOICES_TRANSLATABLE, defaultOnly, missingTranslationsMessage, seenTranslations, SURVEY_TRANSLATABLE } from './translations.js';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const controlAlt = Object.keys(CONTROL_TYPES).map(escapeRe).join('|');
const RE_BEGIN = new RegExp(`^(begin)(\\s|_)(${controlAlt})( (over )?(\\S+))?$`);
const RE_END = new RegExp(`^(end)(\\s|_)(${controlAlt})$`);
// Not anchored, as pyxform's: any type holding "osm LIST".
const RE_OSM = /osm (\S+)/;
const RE_SELECT = new RegExp(
  `^(${Object.keys(SELECT_COMMANDS).map(escapeRe).join('|')}) (\\S+)( (or specify other|or_other|or other))?$`,
);

/** The tags of an `osm LIST` question: the rows of LIST on the osm sheet (name and plain label). */
function osmTags(workbook: RowState['workbook'], list: string): Array<{ name: string; label?: string }> | undefined {
  const sheet = workbook.sheets.osm;
  if (!sheet) return undefined;
  const grouped = groupSheet('osm', sheet, CHOICES_HEADER_ALIASES, CHOICES_COLUMNS, { defaultLanguage: 'default' });
  const tags = grouped.rows.filter((r) => str(r.data['list name']) === list).map((r) => ({ name: str(r.data.name) ?? '', label: str(r.data.label) }));
  return tags;
}

/** Reads the survey sheet into `s.survey.root`; errors of single rows go to `errors`. */
export function readSurveyRows(s: RowState, settings: Settings, choicesGrouped: GroupedSheet | undefined, errors: string[]): GroupedSheet {
  const { survey, warnings } = s;
  const { yes } = settings;
  const surveyGrouped = groupSheet('survey', s.workbook.sheets.survey!, SURVEY_HEADER_ALIASES, SURVEY_COLUMNS, {
    defaultLanguage: survey.defaultLanguage,
    stripWhitespace: yes('clean_text_values', true),
    required: ['type'],
  });
  const translations = { survey: seenTranslations(surveyGrouped.headers, SURVEY_TRANSLATABLE), choices: seenTranslations(choicesGrouped?.headers ?? [], CHOICES_TRANSLATABLE) };
  const missing = missingTranslationsMessage(translations);
  if (missing) warnings.push(missing);

  for (const { row: rowNumber, data: row } of surveyGrouped.rows) {
    try {
      const top = s.stack[s.stack.length - 1];
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
        s.elementNames.set(name, (s.elementNames.get(name) ?? 0) + 1);
        checkUniqueName(name, top, rowNumber, warnings);
      }

      const rowBind = row.bind !== undefined && typeof row.bind !== 'string' ? row.bind : undefined;
      if (s.entities.concerns(rowBind)) {
        s.entities.row({
          path: s.stack.map((e) => (e.controlType ? { name: e.node.name, type: e.controlType } : { name: 'survey', type: 'survey' })),
          row: rowNumber,
          questionName: end ? undefined : name,
          containerRow: begin !== null || end !== null,
          bind: rowBind,
        });
      }

      if (end) {
        const controlType = CONTROL_TYPES[end[3]];
        if (top.controlType !== controlType || s.stack.length === 1) {
          throw new XlsFormProblem(
            `${rowPrefix(rowNumber)} Unmatched 'end_${controlType}'. No matching 'begin_${controlType}' was found for the name '${str(row.name) ?? 'unknown'}'.`,
          );
        }
        s.stack.pop();
        s.tableList = null;
        continue;
      }

      const node = newNode('question', name!, type);
      node.row = rowNumber;
      applyCommon(node, row);
      if ('trigger' in row) node.trigger = parseTrigger(str(row.trigger), rowNumber, s.triggerRefs);
      const parameters = parseParameters(str(row.parameters), rowNumber);

      if (begin) {
        beginControl(s, node, begin, row, rowNumber, appearance);
        continue;
      }

      if ('default' in row) {
        const dflt = str(row.default);
        if (dflt && defaultIsDynamic(dflt, type)) {
          node.dynamicDefault = true;
          node.actions.push({ name: 'setvalue', event: 'odk-instance-first-load' });
          if (s.stack.some((e) => e.controlType === 'repeat')) node.actions.push({ name: 'setvalue', event: 'odk-new-repeat' });
        }
      }

      if (type === 'audit') {
        finishQuestion(node, 'audit', rowNumber);
        applyAuditParameters(node, parameters, rowNumber);
        s.metaChildren.push(node);
        continue;
      }
      if (type === 'calculate' && !node.bind?.calculate && !node.dynamicDefault) {
        throw new XlsFormProblem(`${rowPrefix(rowNumber)} Missing calculation.`);
      }
      if (type === 'simserial' || type === 'subscriberid') {
        warnings.push(`${rowPrefix(rowNumber)} ${type} is no longer supported on most devices. Only old versions of Collect on Android versions older than 11 still support it.`);
      }

      s.questionNames.add(name!);
      const select = RE_SELECT.exec(type);
      if (select) {
        readSelect(s, node, select, rowNumber, parameters);
        continue;
      }

      const osm = RE_OSM.exec(type);
      if (osm) {
        finishQuestion(node, 'osm', rowNumber);
        node.tags = osmTags(s.workbook, osm[1]);
        attach(top.node, node);
        continue;
      }

      if (!(type in QUESTION_TYPES)) throw new XlsFormProblem(`${rowPrefix(rowNumber)} Unknown question type '${type}'.`);
      if (type === 'xml-external' || type === 'csv-external') {
        s.secondaryNames.add(splitext(name!));
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

  if (s.orOtherSeen && (!defaultOnly(translations.survey) || !defaultOnly(translations.choices))) {
    warnings.push(
      "This form uses or_other and translations, which is not recommended. An untranslated input question label and choice label is generated for 'other'. Learn more: https://xlsform.org/en/#specify-other).",
    );
  }
  for (const [target, row] of s.triggerRefs) {
    if (!s.questionNames.has(target)) {
      errors.push(`[row : ${row}] On the 'survey' sheet, the 'trigger' value is invalid. Reference variables must contain a name from the 'survey' sheet. Could not find the name '${target}'.`);
    }
  }
  if (s.stack.length > 1) {
    const open = s.stack[s.stack.length - 1];
    errors.push(`${rowPrefix(open.row)} Unmatched 'begin_${open.controlType}'. No matching 'end_${open.controlType}' was found for the name '${open.node.name}'.`);
  }
  return surveyGrouped;
}
