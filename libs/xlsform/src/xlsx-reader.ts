// Reads the cell values of an .xlsx straight from its XML parts with saxes (the SAX parser
// exceljs itself reads with), without building a spreadsheet object model: one linear pass over
// each part that is needed (docs/xlsform.md, "Reading the spreadsheet"). Cell values come out as
// exceljs gave them and openpyxl's data-only reading gives them to pyxform: strings, numbers,
// booleans, dates (numbers whose style has a date format), formula cells as their cached value.
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { XlsFormReadError } from './errors.js';
import type { XlsFormLimits } from './limits.js';

export type CellValue = string | number | boolean | Date | null;

/** A sheet as the workbook lists it; `grid()` parses its cells on demand. */
export interface XlsxSheet {
  name: string;
  grid: () => CellValue[][];
}

const REL_NS_TAIL = /\/(worksheet|sharedStrings|styles|officeDocument)$/;

/** The element's name without its namespace prefix (`x:c` and `c` are the same cell). */
function local(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function attr(tag: SaxesTagPlain, name: string): string | undefined {
  const v = tag.attributes[name];
  return typeof v === 'string' ? v : undefined;
}

interface XmlHandlers {
  open(name: string, tag: SaxesTagPlain): void;
  text?(text: string): void;
  close?(name: string): void;
}

/** Parses one XML part; a malformed part is refused as exceljs refused it (the first error, once the text is read). */
function parseXml(data: Buffer, handlers: XmlHandlers): void {
  const parser = new SaxesParser({ position: false });
  let failure: Error | undefined;
  parser.on('error', (err) => {
    failure ??= err;
  });
  parser.on('opentag', (tag) => handlers.open(local(tag.name), tag as SaxesTagPlain));
  if (handlers.text) {
    const text = handlers.text;
    parser.on('text', text);
    parser.on('cdata', text);
  }
  if (handlers.close) {
    const close = handlers.close;
    parser.on('closetag', (tag) => close(local(tag.name)));
  }
  parser.write(data.toString('utf8'));
  if (failure) throw new XlsFormReadError(`Error reading .xlsx file: ${failure.message}`);
}

/** `xl/worksheets/../sharedStrings.xml` → `xl/sharedStrings.xml`; a leading `/` is the package root. */
function resolvePart(base: string, target: string): string {
  const parts = target.startsWith('/') ? [] : base.split('/').slice(0, -1);
  for (const p of target.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return parts.join('/');
}

function relsPath(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

/** The relationships of a part: id → [type tail, resolved target]. */
function readRels(entries: Map<string, Buffer>, part: string): Map<string, [string, string]> {
  const rels = new Map<string, [string, string]>();
  const data = entries.get(relsPath(part).toLowerCase());
  if (!data) return rels;
  parseXml(data, {
    open(name, tag) {
      if (name !== 'Relationship') return;
      const id = attr(tag, 'Id');
      const target = attr(tag, 'Target');
      if (id === undefined || target === undefined || attr(tag, 'TargetMode') === 'External') return;
      rels.set(id, [(attr(tag, 'Type') ?? '').match(REL_NS_TAIL)?.[1] ?? '', resolvePart(part, target)]);
    },
  });
  return rels;
}

// exceljs's `_xHHHH_` escapes in shared strings (text-xform.js), uppercase hex only as there.
const X_ESCAPE = /_x([0-9A-F]{4})_/g;
function unescapeX(text: string): string {
  return text.includes('_x') ? text.replace(X_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : text;
}

/** The shared strings: each `<si>` is its `<t>` text or its rich-text runs joined; phonetic runs (`<rPh>`) are left out. */
function readSharedStrings(data: Buffer | undefined): string[] {
  const strings: string[] = [];
  if (!data) return strings;
  let text = '';
  let inT = false;
  let phonetic = 0;
  parseXml(data, {
    open(name) {
      if (name === 'si') text = '';
      else if (name === 't') inT = phonetic === 0;
      else if (name === 'rPh') phonetic++;
    },
    text(t) {
      if (inT) text += t;
    },
    close(name) {
      if (name === 't') inT = false;
      else if (name === 'rPh') phonetic--;
      else if (name === 'si') strings.push(unescapeX(text));
    },
  });
  return strings;
}

// Built-in number formats that exceljs knows (defaultnumformats.js) and that read as dates.
const BUILTIN_FORMATS: Record<number, string> = {
  14: 'mm-dd-yy', 15: 'd-mmm-yy', 16: 'd-mmm', 17: 'mmm-yy', 18: 'h:mm AM/PM', 19: 'h:mm:ss AM/PM',
  20: 'h:mm', 21: 'h:mm:ss', 22: 'm/d/yy "h":mm', 45: 'mm:ss', 46: '[h]:mm:ss', 47: 'mmss.0',
};

/** exceljs's date test of a number format: a date or time letter outside quotes and brackets. */
function isDateFormat(format: string | undefined): boolean {
  if (!format) return false;
  return /[ymdhMsb]+/.test(format.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, ''));
}

/** Which cell styles (`s` of a cell, index into cellXfs) format numbers as dates. */
function readDateStyles(data: Buffer | undefined): boolean[] {
  if (!data) return [];
  const custom = new Map<number, string>();
  const xfNumFmts: number[] = [];
  let inCellXfs = false;
  parseXml(data, {
    open(name, tag) {
      if (name === 'numFmt') custom.set(parseInt(attr(tag, 'numFmtId') ?? '', 10), (attr(tag, 'formatCode') ?? '').replace(/[\\](.)/g, '$1'));
      else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'xf' && inCellXfs) xfNumFmts.push(parseInt(attr(tag, 'numFmtId') ?? '0', 10) || 0);
    },
    close(name) {
      if (name === 'cellXfs') inCellXfs = false;
    },
  });
  return xfNumFmts.map((id) => id !== 0 && isDateFormat(custom.get(id) ?? BUILTIN_FORMATS[id]));
}

/** An Excel serial day as a Date (exceljs's excelToDate). */
function excelToDate(v: number, date1904: boolean): Date {
  return new Date(Math.round((v - 25569 + (date1904 ? 1462 : 0)) * 24 * 3600 * 1000));
}

/** `B12` → 2; 0 when the reference has no column letters. */
function columnOf(ref: string): number {
  let col = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i) | 0x20;
    if (c < 0x61 || c > 0x7a) break;
    col = col * 26 + (c - 0x60);
  }
  return col;
}

interface SheetContext {
  strings: string[];
  dateStyles: boolean[];
  date1904: boolean;
  limits: XlsFormLimits;
}

/**
 * The cells of a sheet that hold something, as a grid from A1. Spreadsheet programs declare
 * dimensions and write styled empty cells far past the filled ones, so rows and columns are
 * counted by content, as openpyxl's values are read by pyxform; the limits apply to the filled
 * extent. Data validations, conditional formats and merged ranges are not read (a merged
 * range's other cells are empty, as openpyxl gives them).
 */
function readSheet(name: string, data: Buffer, ctx: SheetContext): CellValue[][] {
  const { strings, dateStyles, date1904, limits } = ctx;
  const filled: Array<[number, CellValue[]]> = [];
  let rows = 0;
  let columns = 0;
  let rowNumber = 0;
  let line: CellValue[] = [];
  let col = 0;
  let type: string | undefined;
  let style = 0;
  let value = '';
  let inline = '';
  // 1: <v>; 2: <t> of an inline string; 3: <t> of an inline rich-text run (exceljs unescapes those).
  let collecting = 0;
  let inRun = false;
  let phonetic = 0;
  let inSheetData = false;
  parseXml(data, {
    open(tag, node) {
      if (!inSheetData) {
        if (tag === 'sheetData') inSheetData = true;
        return;
      }
      switch (tag) {
        case 'row': {
          const r = attr(node, 'r');
          rowNumber = r !== undefined ? parseInt(r, 10) || rowNumber + 1 : rowNumber + 1;
          line = [];
          col = 0;
          break;
        }
        case 'c': {
          const ref = attr(node, 'r');
          col = (ref !== undefined && columnOf(ref)) || col + 1;
          type = attr(node, 't');
          const s = attr(node, 's');
          style = s !== undefined ? parseInt(s, 10) || 0 : 0;
          value = '';
          inline = '';
          break;
        }
        case 'v':
          collecting = 1;
          break;
        case 'r':
          inRun = true;
          break;
        case 'rPh':
          phonetic++;
          break;
        case 't':
          if (phonetic === 0) collecting = inRun ? 3 : 2;
          break;
      }
    },
    text(t) {
      if (collecting === 1) value += t;
      else if (collecting === 2) inline += t;
      else if (collecting === 3) inline += unescapeX(t);
    },
    close(tag) {
      if (!inSheetData) return;
      switch (tag) {
        case 'v':
        case 't':
          collecting = 0;
          break;
        case 'r':
          inRun = false;
          break;
        case 'rPh':
          phonetic--;
          break;
        case 'c': {
          const v = cellValue(type, value, inline, style);
          if (v !== null && col > 0) line[col - 1] = v;
          break;
        }
        case 'row':
          endRow();
          break;
        case 'sheetData':
          inSheetData = false;
          break;
      }
    },
  });

  function cellValue(t: string | undefined, v: string, is: string, s: number): CellValue {
    switch (t) {
      case 's':
        return v === '' ? null : (strings[parseInt(v, 10)] ?? '');
      case 'str':
      case 'inlineStr':
        return v === '' && is === '' ? null : is || v;
      case 'b':
        return v === '' ? null : parseInt(v, 10) !== 0;
      case 'e':
        return v === '' ? null : v;
      case 'd': {
        if (v === '') return null;
        const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`);
        return Number.isNaN(d.getTime()) ? v : d;
      }
      default: {
        if (v === '') return null;
        const n = parseFloat(v);
        return s !== 0 && dateStyles[s] ? excelToDate(n, date1904) : n;
      }
    }
  }

  function endRow(): void {
    let last = line.length;
    while (last > 0 && isEmpty(line[last - 1])) last--;
    if (last === 0) return;
    rows = Math.max(rows, rowNumber);
    columns = Math.max(columns, last);
    if (rows <= limits.maxRows && columns <= limits.maxColumns) filled.push([rowNumber, last === line.length ? line : line.slice(0, last)]);
  }

  if (rows > limits.maxRows) throw new XlsFormReadError(`The '${name}' sheet has ${rows} rows; the limit is ${limits.maxRows}.`);
  if (columns > limits.maxColumns) throw new XlsFormReadError(`The '${name}' sheet has ${columns} columns; the limit is ${limits.maxColumns}.`);
  const grid: CellValue[][] = Array.from({ length: rows }, () => []);
  for (const [r, values] of filled) if (r >= 1) grid[r - 1] = values;
  return grid;
}

/** A cell that reads as nothing once made a string (cellToString): absent, or only whitespace. */
function isEmpty(v: CellValue | undefined): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.replace(/\u00a0/g, ' ').trim() === '');
}

/**
 * The worksheets of an unpacked .xlsx (entry names lowercased → bytes), in the order the
 * workbook lists them. Throws XlsFormReadError for malformed XML.
 */
export function xlsxSheets(entries: Map<string, Buffer>, limits: XlsFormLimits): XlsxSheet[] {
  const rootRels = readRels(entries, '');
  const book = [...rootRels.values()].find(([type]) => type === 'officeDocument')?.[1] ?? 'xl/workbook.xml';
  const bookData = entries.get(book.toLowerCase());
  if (!bookData) return [];
  const listed: Array<{ name: string; rid: string }> = [];
  let date1904 = false;
  parseXml(bookData, {
    open(name, tag) {
      if (name === 'sheet') {
        const rid = attr(tag, 'r:id') ?? Object.entries(tag.attributes).find(([k]) => k.endsWith(':id'))?.[1];
        listed.push({ name: attr(tag, 'name') ?? '', rid: typeof rid === 'string' ? rid : '' });
      } else if (name === 'workbookPr') {
        const v = attr(tag, 'date1904');
        date1904 = v === '1' || v === 'true';
      }
    },
  });
  const rels = readRels(entries, book);
  const partOf = (type: string, fallback: string) => [...rels.values()].find(([t]) => t === type)?.[1] ?? fallback;
  let ctx: SheetContext | undefined;
  const context = (): SheetContext =>
    (ctx ??= {
      strings: readSharedStrings(entries.get(partOf('sharedStrings', 'xl/sharedStrings.xml').toLowerCase())),
      dateStyles: readDateStyles(entries.get(partOf('styles', 'xl/styles.xml').toLowerCase())),
      date1904,
      limits,
    });
  const sheets: XlsxSheet[] = [];
  for (const { name, rid } of listed) {
    const rel = rels.get(rid);
    if (!rel || rel[0] !== 'worksheet') continue;
    const data = entries.get(rel[1].toLowerCase());
    if (!data) continue;
    sheets.push({ name, grid: () => readSheet(name, data, context()) });
  }
  return sheets;
}
