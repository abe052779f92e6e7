export { convertTables, convertWorkbook, convertXlsForm, convertXlsFormOrThrow } from './convert.js';
export type { ConversionResult, ConvertOptions } from './convert.js';
export { convertXlsFormInWorker, convertXlsFormInWorkerOrThrow, runInWorker } from './worker.js';
export type { WorkerOptions } from './worker.js';
export { XlsFormConversionError, XlsFormProblem, XlsFormReadError } from './errors.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { XlsFormLimits } from './limits.js';
export { readXlsx, tablesToWorkbook, tablesToXlsx } from './workbook.js';
export type { SheetTable, WorkbookData, WorkbookTables } from './workbook.js';
