// The settings sheet: form id, title, version, languages and the switches the other sheets
// read (pyxform's settings handling).
import { XlsFormProblem } from '../errors.js';
import { isXmlTag } from '../expression.js';
import { type Cell, type GroupedRow, groupSheet } from '../headers.js';
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
  applyRootSettings(survey, settings, yes);
  return { settings: { row: settings, yes }, survey };
}

/** String entries of a `prefix::NAME` group of settings columns. */
function strings(cell: Cell | undefined): Record<string, string> | undefined {
  if (cell === undefined || typeof cell === 'string') return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cell)) if (typeof v === 'string' && v !== '') out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

// The settings that pyxform's Survey writes on the form's root: `bind::NAME` columns become a
// bind on the root element (CyberTracker's `ct:` attributes), `instance::NAME` and
// `attribute::NAME` attributes of the primary instance's root element (the first with `${}`
// resolved, the second as written), `instance_xmlns` its namespace, the SMS `prefix` and
// `delimiter` its `odk:prefix`/`odk:delimiter`, and `client_editable` the submission's
// `odk:client-editable` (docs/xlsform.md, "What is supported").
function applyRootSettings(survey: Survey, settings: GroupedRow, yes: (key: string, dflt: boolean) => boolean): void {
  const bind = strings(settings.bind);
  if (bind) survey.root.bind = bind;
  survey.root.instanceAttrs = strings(settings.instance);
  survey.rootAttributes = strings(settings.attribute);
  survey.instanceXmlns = str(settings.instance_xmlns) || undefined;
  survey.smsPrefix = str(settings.prefix) || undefined;
  survey.smsDelimiter = str(settings.delimiter) || undefined;
  survey.clientEditable = yes('client_editable', false);
}
