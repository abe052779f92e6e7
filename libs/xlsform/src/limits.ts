/** Caps that keep conversion linear and bounded (docs/xlsform.md, "Limits"). */
export interface XlsFormLimits {
  /** Size of the uploaded .xlsx file. */
  maxFileBytes: number;
  /** Sum of the uncompressed sizes of the entries of the .xlsx (a zip), checked before it is unpacked. */
  maxUncompressedBytes: number;
  /** Rows of any one sheet, header row included. */
  maxRows: number;
  /** Columns of any one sheet. */
  maxColumns: number;
  /** Characters in one cell. */
  maxCellLength: number;
}

export const DEFAULT_LIMITS: Readonly<XlsFormLimits> = Object.freeze({
  maxFileBytes: 10 * 1024 * 1024,
  maxUncompressedBytes: 100 * 1024 * 1024,
  maxRows: 20_000,
  maxColumns: 500,
  maxCellLength: 10_000,
});

export function resolveLimits(partial?: Partial<XlsFormLimits>): XlsFormLimits {
  return { ...DEFAULT_LIMITS, ...(partial ?? {}) };
}
