/** The row prefix pyxform puts in front of messages about one sheet row. */
export function rowPrefix(row: number | undefined | null): string {
  return `[row : ${row ?? 'unknown'}]`;
}

/** A problem that stops the conversion; `message` is the text shown to the form author. */
export class XlsFormProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XlsFormProblem';
  }
}

/** The file could not be read as a spreadsheet, or it is larger than the limits allow. */
export class XlsFormReadError extends XlsFormProblem {
  constructor(message: string) {
    super(message);
    this.name = 'XlsFormReadError';
  }
}

/** Thrown by `convertXlsFormOrThrow` (and the worker API) when the form has errors. */
export class XlsFormConversionError extends Error {
  constructor(
    readonly errors: string[],
    readonly warnings: string[],
  ) {
    super(errors.join('\n'));
    this.name = 'XlsFormConversionError';
  }
}
