// Column headers to nested keys, as pyxform's dealias_and_group_headers: `label::French (fr)`
// becomes label -> {"French (fr)": ...}, `constraint_message` becomes bind -> jr:constraintMsg,
// `image::en` becomes media -> image -> {en: ...}. Unknown columns are kept as written.
import { XlsFormProblem } from './errors.js';
import type { SheetData } from './workbook.js';

export type Cell = string | NestedCell;
export interface NestedCell {
  [key: string]: Cell;
}
export type GroupedRow = Record<string, Cell>;

export interface GroupedSheet {
  /** Parsed header token lists, one per distinct column. */
  headers: string[][];
  rows: Array<{ row: number; data: GroupedRow }>;
}

const SMART_QUOTES: Record<string, string> = { '\u2018': "'", '\u2019': "'", '\u201c': '"', '\u201d': '"' };

const RE_SMART_QUOTE = /[\u2018\u2019\u201c\u201d]/;

function cleanText(value: string, stripWhitespace: boolean): string {
  let v = value;
  if (stripWhitespace) {
    v = v.trim();
    if (v.includes('  ')) v = v.replace(/ +/g, ' ');
  }
  return RE_SMART_QUOTE.test(v) ? v.replace(/[\u2018\u2019\u201c\u201d]/g, (c) => SMART_QUOTES[c]) : v;
}

function toSnakeCase(value: string): string {
  return value.split(/\s+/).filter(Boolean).join('_').toLowerCase();
}

function processHeader(
  header: string,
  useDoubleColon: boolean,
  aliases: Readonly<Record<string, string | readonly string[]>>,
  columns: ReadonlySet<string>,
): string[] {
  if (columns.has(header) && !(header in aliases)) return [header];
  const normalised = toSnakeCase(header);
  if (columns.has(normalised) && !(normalised in aliases)) return [normalised];
  let tokens: string[];
  if (useDoubleColon || header.includes('::')) {
    tokens = header.split('::').map((t) => t.trim());
  } else {
    tokens = header.split(':').map((t) => t.trim());
    const jr = tokens.indexOf('jr');
    if (jr >= 0 && jr + 1 < tokens.length) tokens = [...tokens.slice(0, jr), `jr:${tokens[jr + 1]}`, ...tokens.slice(jr + 2)];
  }
  const first = toSnakeCase(tokens[0]);
  const alias = aliases[first];
  if (alias !== undefined) return typeof alias === 'string' ? [alias, ...tokens.slice(1)] : [...alias, ...tokens.slice(1)];
  if (columns.has(first)) return [first, ...tokens.slice(1)];
  return tokens.length === 1 ? [header] : tokens;
}

function nest(tokens: string[], value: string): Cell {
  let out: Cell = value;
  for (let i = tokens.length - 1; i >= 0; i--) out = { [tokens[i]]: out };
  return out;
}

/** pyxform's merge_dicts: a plain value meeting a dict becomes the dict's default-language entry. */
export function mergeCells(a: Cell | undefined, b: Cell | undefined, defaultKey: string): Cell | undefined {
  if (a === undefined || a === '') return b;
  if (b === undefined || b === '') return a;
  let da: NestedCell;
  let db: NestedCell;
  if (typeof a === 'string') {
    if (typeof b !== 'string' && defaultKey in b) return b;
    da = { [defaultKey]: a };
  } else da = a;
  if (typeof b === 'string') {
    if (defaultKey in da) return da;
    db = { [defaultKey]: b };
  } else db = b;
  for (const key of Object.keys(db)) {
    const merged = mergeCells(da[key], db[key], defaultKey);
    if (merged !== undefined) da[key] = merged;
  }
  return da;
}

export function groupSheet(
  sheetName: string,
  sheet: SheetData,
  aliases: Readonly<Record<string, string | readonly string[]>>,
  columns: ReadonlySet<string>,
  opts: { defaultLanguage: string; stripWhitespace?: boolean; required?: string[] },
): GroupedSheet {
  const useDoubleColon = sheet.headers.some((h) => h.includes('::'));
  const keyOf = new Map<string, string[]>();
  const seenTokens = new Map<string, string>();
  for (const header of sheet.headers) {
    const tokens = processHeader(header, useDoubleColon, aliases, columns);
    const joined = tokens.join('\u0000');
    const other = seenTokens.get(joined);
    if (other !== undefined && tokens[0] !== header) {
      throw new XlsFormProblem(
        `Invalid headers provided for sheet: '${sheetName}'. Headers that are different names for the same column were found: '${other}', '${header}'. Rename or remove one of these columns.`,
      );
    }
    keyOf.set(header, tokens);
    seenTokens.set(joined, header);
  }
  const rows = sheet.rows.map(({ row, cells }) => {
    let data: GroupedRow = {};
    for (const [header, raw] of cells) {
      const value = cleanText(raw, opts.stripWhitespace ?? false);
      const tokens = keyOf.get(header)!;
      if (tokens.length === 1) data[tokens[0]] = value;
      else data = mergeCells(data, { [tokens[0]]: nest(tokens.slice(1), value) }, opts.defaultLanguage) as GroupedRow;
    }
    return { row, data };
  });
  if (opts.required && (rows.length > 0 || sheetName === 'survey')) {
    const firsts = new Set([...keyOf.values()].map((t) => t[0]));
    const missing = opts.required.filter((h) => !firsts.has(h));
    if (missing.length > 0) {
      throw new XlsFormProblem(
        `Invalid headers provided for sheet: '${sheetName}'. One or more required column headers were not found: ${missing.map((h) => `'${h}'`).join(', ')}. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
      );
    }
  }
  return { headers: [...keyOf.values()], rows };
}
