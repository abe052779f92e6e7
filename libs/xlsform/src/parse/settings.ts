// The settings sheet: form id, title, version, languages and the switches the other sheets
// read (pyxform's settings handling).
import { XlsFormProblem } from '../errors.js';
import { isXmlTag } from '../expression.js';
import { type GroupedRow, groupSheet } from '../headers.js';
import { newNode, type Survey } from '../model.js';
import { SETTINGS_COLUMNS, SETTINGS_HEADER_ALIASES, YES_NO } from '../question-types.js';
import type { WorkbookData } from '../workbook.js';
import { misspelling, str } from './cells.js';

export interface Settings {
  row: GroupedRow;
  /** A yes/no setting, `dflt` when absent or not a yes/no word. */
  yes: (key: string, dflt: boolean) => boolean;
}

export function readSettings(workbook: WorkbookData, opts: { fallbackFormName?: string }, warnings: string[]): { settings: Settings; survey: Survey } {
  const sheetNames = workbook.sheetNames;
  let settings: GroupedRow = {};
  const settingsSheet = workbook.sheets.settings;
  if (settingsSheet) {
    // `form_id` wins over `id_string` when a settings sheet has both (pyxform).
    const hasFormId = settingsSheet.headers.some((h) => h.trim().toLowerCase() === 'form_id');
    const sheet = hasFormId
      ? { headers: settingsSheet.headers.filter((h) => h.trim().toLowerCase() !== 'id_string'), rows: settingsSheet.rows.map((r) => ({ row: r.row, cells: new Map([...r.cells].filter(([h]) => h.trim().toLowerCase() !== 'id_string')) })) }
      : settingsSheet;
    const grouped = groupSheet('settings', sheet, SETTINGS_HEADER_ALIASES, SETTINGS_COLUMNS, { defaultLanguage: 'default' });
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
  return { settings: { row: settings, yes }, survey };
}
