// Public entry points: an .xlsx (or tables) in, the XForm XML and pyxform-style messages out.
import { XlsFormConversionError, XlsFormProblem } from './errors.js';
import { type XlsFormLimits, resolveLimits } from './limits.js';
import { parseWorkbook } from './parse/index.js';
import { readXlsx, tablesToWorkbook, type WorkbookData, type WorkbookTables } from './workbook.js';
import { XFormWriter } from './xform.js';

export interface ConvertOptions {
  /** Used as form_id (and title) when the settings sheet names none, as pyxform uses the file name. */
  fallbackFormName?: string;
  limits?: Partial<XlsFormLimits>;
}

export interface ConversionResult {
  /** The XForm; null when there are errors. */
  xml: string | null;
  errors: string[];
  warnings: string[];
  formId: string | null;
  title: string | null;
  version: string | null;
  /** Root element of the primary instance (`data` unless the settings sheet has `name`). */
  instanceName: string | null;
  /** Files the form refers to that must be attached as form media (CSV/XML of pulldata, select_*_from_file, xml-external, csv-external). */
  attachments: string[];
  /** The external_choices sheet as CSV: the `itemsets.csv` that select_one_external reads. */
  itemsetsCsv: string | null;
}

function failed(errors: string[], warnings: string[] = [], itemsetsCsv: string | null = null): ConversionResult {
  return { xml: null, errors, warnings, formId: null, title: null, version: null, instanceName: null, attachments: [], itemsetsCsv };
}

function fileName(src: string): string {
  return src.slice(src.lastIndexOf('/') + 1);
}

export function convertWorkbook(workbook: WorkbookData, options: ConvertOptions = {}): ConversionResult {
  const parsed = parseWorkbook(workbook, { fallbackFormName: options.fallbackFormName });
  const survey = parsed.survey;
  if (!survey || parsed.errors.length > 0) return failed(parsed.errors, parsed.warnings, parsed.itemsetsCsv ?? null);
  let xml: string;
  try {
    xml = new XFormWriter(survey).write();
  } catch (err) {
    if (err instanceof XlsFormProblem) return failed([err.message], parsed.warnings, parsed.itemsetsCsv ?? null);
    throw err;
  }
  const attachments = [...xml.matchAll(/<instance id="[^"]*" src="(jr:\/\/file(?:-csv)?\/[^"]+)"/g)].map((m) => fileName(m[1]));
  return {
    xml, errors: [], warnings: parsed.warnings, formId: survey.idString, title: survey.title, version: survey.version ?? null,
    instanceName: survey.instanceName, attachments: [...new Set(attachments)], itemsetsCsv: parsed.itemsetsCsv ?? null,
  };
}

/** Converts an .xlsx file. Never throws for problems in the file: they are in `errors`. */
export async function convertXlsForm(data: Uint8Array, options: ConvertOptions = {}): Promise<ConversionResult> {
  let workbook: WorkbookData;
  try {
    workbook = await readXlsx(data, resolveLimits(options.limits));
  } catch (err) {
    if (err instanceof XlsFormProblem) return failed([err.message]);
    throw err;
  }
  return convertWorkbook(workbook, options);
}

/** Converts sheets given as tables (first line = headers), e.g. `{ survey: [['type','name','label'], ['text','q1','Q1']] }`. */
export function convertTables(tables: WorkbookTables, options: ConvertOptions = {}): ConversionResult {
  let workbook: WorkbookData;
  try {
    workbook = tablesToWorkbook(tables, resolveLimits(options.limits));
  } catch (err) {
    if (err instanceof XlsFormProblem) return failed([err.message]);
    throw err;
  }
  return convertWorkbook(workbook, options);
}

/** Like convertXlsForm, but throws XlsFormConversionError (errors + warnings) when the form has errors. */
export async function convertXlsFormOrThrow(data: Uint8Array, options: ConvertOptions = {}): Promise<ConversionResult & { xml: string }> {
  const result = await convertXlsForm(data, options);
  if (result.xml === null) throw new XlsFormConversionError(result.errors, result.warnings);
  return result as ConversionResult & { xml: string };
}
