// Every `${name}` in the settings, entities, survey and choices sheets must name exactly one element of
// the survey, as pyxform checks after reading the rows.
import { MalformedReference, parseReferences } from '../expression.js';
import type { GroupedSheet } from '../headers.js';
import type { WorkbookData } from '../workbook.js';

const PYREF_001 = (row: number, sheet: string, column: string) =>
  `[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Reference variables must start with '\${', then a question name, and end with '}'.`;

export function validateReferences(
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
  // The list name columns hold names, not expressions.
  if (workbook.sheets.entities) check('entities', workbook.sheets.entities.rows, (h) => ['list_name', 'dataset', 'repeat'].includes(h));
  const surveySheet = workbook.sheets.survey!;
  const ignored = new Set(surveySheet.headers.filter((_, i) => ['type', 'name', 'trigger'].includes(survey.headers[i]?.[0] ?? '')));
  check('survey', surveySheet.rows, (h) => ignored.has(h));
  if (workbook.sheets.choices && choices) {
    const translatableCols = new Set(workbook.sheets.choices.headers.filter((_, i) => ['label', 'media'].includes(choices.headers[i]?.[0] ?? '')));
    check('choices', workbook.sheets.choices.rows, (h) => !translatableCols.has(h));
  }
}
