// The choices sheet: lists by name, each choice's label, media and extra columns, the checks
// pyxform makes on names and labels; and the list names of the external_choices sheet.
import { XlsFormProblem } from '../errors.js';
import { hasReference } from '../expression.js';
import { type GroupedRow, groupSheet, type GroupedSheet } from '../headers.js';
import type { Choice, ChoiceList, Survey } from '../model.js';
import { CHOICES_COLUMNS, CHOICES_HEADER_ALIASES } from '../question-types.js';
import type { WorkbookData } from '../workbook.js';
import { str, translatable } from './cells.js';
import type { Settings } from './settings.js';

/** Reads the choices sheet into `survey.choices`; returns the grouped sheet (undefined without one). */
export function readChoices(workbook: WorkbookData, survey: Survey, settings: Settings, errors: string[], warnings: string[]): GroupedSheet | undefined {
  const { yes } = settings;
  const defaultLanguage = survey.defaultLanguage;
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
  return choicesGrouped;
}

/** The list names of the external_choices sheet. */
export function externalListNames(workbook: WorkbookData): Set<string> {
  const external = new Set<string>();
  if (workbook.sheets.external_choices) {
    for (const r of workbook.sheets.external_choices.rows) {
      // Headers in any letter case, as pyxform reads them (`LIST_NAME`).
      let list: string | undefined;
      for (const [header, value] of r.cells) if (['list_name', 'list name'].includes(header.toLowerCase())) list ??= value;
      if (list) external.add(list);
    }
  }
  return external;
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
