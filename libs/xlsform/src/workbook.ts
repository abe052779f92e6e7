// Reads the sheets of an XLSForm into rows of strings, the way pyxform's xlsx backend does:
// the first row holds the headers, every later row keeps its spreadsheet row number (empty
// rows included, so messages can name the row), cell values become strings (TRUE/FALSE,
// whole numbers without ".0", whitespace trimmed, non-breaking spaces made plain spaces).
// The .xlsx is read by xlsx-reader.ts; exceljs only writes workbooks (tablesToXlsx), and is a
// type import here, loaded on first use, so a service that links this package does not carry
// exceljs's 150 modules at idle (docs/benchmarks.md, "idle-rss").
import type ExcelJS from 'exceljs';
import { XlsFormProblem, XlsFormReadError } from './errors.js';
import type { XlsFormLimits } from './limits.js';
import { xlsxSheets } from './xlsx-reader.js';
import { uncompressedZipSize, unpackZipCapped } from './zip.js';

export const SUPPORTED_SHEETS = ['survey', 'choices', 'settings', 'external_choices', 'entities', 'osm'] as const;
export type SheetName = (typeof SUPPORTED_SHEETS)[number];

export interface SheetRow {
  /** Row number in the spreadsheet (the header row is 1). */
  row: number;
  /** Non-empty cells keyed by their header. */
  cells: Map<string, string>;
}

export interface SheetData {
  headers: string[];
  rows: SheetRow[];
}

export interface WorkbookData {
  /** Every sheet name as written in the file, for misspelling hints. */
  sheetNames: string[];
  sheets: Partial<Record<SheetName, SheetData>>;
}

/** A sheet written as a table: the first line holds the headers. Cells may be numbers or booleans, as in a spreadsheet. */
export type SheetTable = ReadonlyArray<ReadonlyArray<string | number | boolean | null | undefined>>;
export type WorkbookTables = Partial<Record<string, SheetTable>>;

const MAX_ADJACENT_EMPTY_COLUMNS = 20;
const MAX_ADJACENT_EMPTY_ROWS = 60;

export function cellToString(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value === true) return 'TRUE';
  if (value === false) return 'FALSE';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value);
  if (value instanceof Date) return formatDate(value);
  if (typeof value === 'string') return value.trim().replace(/\u00a0/g, ' ');
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v.richText)) return cellToString((v.richText as Array<{ text?: string }>).map((t) => t.text ?? '').join(''));
    if ('result' in v) return cellToString(v.result);
    if ('text' in v) return cellToString(v.text);
    if ('error' in v) return cellToString(v.error);
  }
  return String(value).trim();
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

// Python's str(datetime): "2024-01-31 00:00:00", with ".971000" when openpyxl read milliseconds;
// a time-only cell (Excel day 0) prints as "HH:MM:SS".
function formatDate(d: Date): string {
  const ms = d.getUTCMilliseconds();
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${ms ? `.${pad(ms, 3)}000` : ''}`;
  if (d.getUTCFullYear() <= 1900 && d.getUTCMonth() === 0 && d.getUTCDate() <= 1 && d.getUTCFullYear() < 1900) return time;
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${time}`;
}

function checkCell(text: string, sheet: string, row: number, limits: XlsFormLimits): void {
  if (text.length > limits.maxCellLength) {
    throw new XlsFormReadError(`[row : ${row}] On the '${sheet}' sheet, a cell has ${text.length} characters; the limit is ${limits.maxCellLength}.`);
  }
}

/** Turns a raw grid (header row first) into SheetData, applying pyxform's header and empty-row rules. */
export function gridToSheet(sheet: string, grid: ReadonlyArray<ReadonlyArray<unknown>>, limits: XlsFormLimits): SheetData {
  if (grid.length > limits.maxRows) {
    throw new XlsFormReadError(`The '${sheet}' sheet has ${grid.length} rows; the limit is ${limits.maxRows}.`);
  }
  const first = grid[0] ?? [];
  if (first.length > limits.maxColumns) {
    throw new XlsFormReadError(`The '${sheet}' sheet has ${first.length} columns; the limit is ${limits.maxColumns}.`);
  }
  const headerSlots: Array<string | null> = [];
  const seen = new Set<string>();
  let adjacentEmpty = 0;
  for (const raw of first) {
    const text = cellToString(raw);
    checkCell(text, sheet, 1, limits);
    if (text === '') {
      headerSlots.push(null);
      if (adjacentEmpty === MAX_ADJACENT_EMPTY_COLUMNS) break;
      adjacentEmpty++;
    } else {
      adjacentEmpty = 0;
      const clean = text.replace(/ +/g, ' ');
      if (seen.has(clean)) throw new XlsFormProblem(`Duplicate column header: ${clean}`);
      seen.add(clean);
      headerSlots.push(clean);
    }
  }
  headerSlots.length -= adjacentEmpty;
  const rows: SheetRow[] = [];
  let emptyRun = 0;
  for (let r = 1; r < grid.length; r++) {
    const line = grid[r] ?? [];
    if (line.length > limits.maxColumns) {
      throw new XlsFormReadError(`[row : ${r + 1}] The '${sheet}' sheet has ${line.length} columns; the limit is ${limits.maxColumns}.`);
    }
    const cells = new Map<string, string>();
    for (let c = 0; c < headerSlots.length; c++) {
      const key = headerSlots[c];
      if (key === null) continue;
      const text = cellToString(line[c]);
      checkCell(text, sheet, r + 1, limits);
      if (text !== '') cells.set(key, text);
    }
    if (cells.size === 0) {
      if (emptyRun === MAX_ADJACENT_EMPTY_ROWS) break;
      emptyRun++;
    } else {
      emptyRun = 0;
    }
    rows.push({ row: r + 1, cells });
  }
  rows.length -= emptyRun;
  return { headers: headerSlots.filter((h): h is string => h !== null), rows };
}

function assemble(named: Array<[string, () => ReadonlyArray<ReadonlyArray<unknown>>]>, limits: XlsFormLimits): WorkbookData {
  const result: WorkbookData = { sheetNames: named.map(([n]) => n), sheets: {} };
  for (const [name, grid] of named) {
    const lower = name.toLowerCase();
    if ((SUPPORTED_SHEETS as readonly string[]).includes(lower)) {
      result.sheets[lower as SheetName] = gridToSheet(lower, grid(), limits);
    } else if (named.length === 1) {
      result.sheets.survey = gridToSheet('survey', grid(), limits);
    }
  }
  return result;
}

/** The workbook from tables (used by tests, benches and callers that already hold rows). */
export function tablesToWorkbook(tables: WorkbookTables, limits: XlsFormLimits): WorkbookData {
  return assemble(
    Object.entries(tables)
      .filter((e): e is [string, SheetTable] => e[1] !== undefined)
      .map(([name, table]) => [name, () => table]),
    limits,
  );
}

/** exceljs, imported on first use (only to write workbooks). */
async function loadExcelJs(): Promise<typeof ExcelJS> {
  return (await import('exceljs')).default;
}

/** Reads an .xlsx file. Throws XlsFormReadError when it is not one or exceeds the limits. */
export async function readXlsx(data: Uint8Array, limits: XlsFormLimits): Promise<WorkbookData> {
  if (data.byteLength > limits.maxFileBytes) {
    throw new XlsFormReadError(`The file has ${data.byteLength} bytes; the limit is ${limits.maxFileBytes}.`);
  }
  const inflated = uncompressedZipSize(data);
  if (inflated > limits.maxUncompressedBytes) {
    throw new XlsFormReadError(`The workbook unpacks to ${inflated} bytes; the limit is ${limits.maxUncompressedBytes}.`);
  }
  // The declared sizes are only a first, cheap refusal: what bounds memory is the inflate cap.
  const entries = await unpackZipCapped(data, limits.maxUncompressedBytes);
  return assemble(xlsxSheets(entries, limits).map((s) => [s.name, s.grid]), limits);
}

/** Writes tables to an .xlsx file (the corpus generator, tests and benches use it). */
export async function tablesToXlsx(tables: WorkbookTables): Promise<Buffer> {
  const workbook = new (await loadExcelJs()).Workbook();
  for (const [name, table] of Object.entries(tables)) {
    if (!table) continue;
    const ws = workbook.addWorksheet(name);
    for (const line of table) ws.addRow(line.map((v) => (v === undefined ? null : v)));
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
