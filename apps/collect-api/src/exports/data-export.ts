import { once, type EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { FormField } from '../forms/form.entity.js';
import type { SubmissionExportRow } from '../submissions/submission-data.repository.js';
import {
  allRepeats, csvColumns, isSplit, metadataColumns, scopeTree, sheetColumns, sheetName,
  type Choice, type Column, type ExportMetadata, type ExportOptions, type RepeatScope,
} from './export-columns.js';
import { formulaGuard } from './spreadsheet-cells.js';
import { drainOrClose } from '../database/drain.js';

/** What the writers read: the export's fields, choices, repeat sizes and a fresh row stream per pass. */
export interface ExportPlan {
  fields: FormField[];
  choices: ReadonlyMap<string, Choice[]>;
  /** Most instances of each repeat (by xpath) in one parent: CSV's indexed columns. */
  repeatCounts: ReadonlyMap<string, number>;
  total: number;
  rows(): AsyncIterable<SubmissionExportRow[]>;
}

/** Rows done so far, of `total` row visits (XLSX visits the rows once per sheet). */
export type Progress = (done: number, total: number) => void;

const metadataOf = (r: SubmissionExportRow): ExportMetadata => ({ _id: r.id, _uuid: r.uuid, _submission_time: r.submission_time, _version: r.version, _submitted_by: r.submitted_by });

/** Waits while the destination holds more than its buffer (backpressure towards PostgreSQL's cursor). */
async function drained(out: Writable): Promise<void> {
  if (out.writableNeedDrain && !out.destroyed) await drainOrClose(out);
}

/**
 * The part of exceljs 4.4's StreamBuf (a worksheet's `stream`) that leads into the zip: archiver
 * wraps it in a readable-stream 2 PassThrough (no `writableNeedDrain` there, hence `_writableState`).
 */
interface SheetStream {
  pipes?: Array<EventEmitter & { writableNeedDrain?: boolean; _writableState?: { needDrain?: boolean } }>;
}

/**
 * Waits until the sheet's zip entry has taken what the rows wrote, then until `out` has.
 * exceljs's StreamBuf writes each 64 KB of sheet XML into the zip entry's stream without
 * looking at its answer, so when deflating is slower than making XML (it is), the uncompressed
 * sheet piled up in front of the deflate stream: +64 MB of ArrayBuffers for 100,000 rows
 * (docs/exports.md, "Streaming and memory"). Waiting for that stream's `drain` after each
 * batch keeps about one batch of XML in memory.
 */
export async function sheetDrained(sheet: unknown, out: Writable): Promise<void> {
  for (const pipe of (sheet as { stream?: SheetStream }).stream?.pipes ?? []) {
    const full = pipe.writableNeedDrain ?? pipe._writableState?.needDrain ?? false;
    if (full && !out.destroyed) await drainOrClose(pipe, out);
  }
  await drained(out);
}

/** RFC 4180 as csv-stringify writes it by default: `,`, `"` quoting when needed, LF, no BOM. */
const CSV_OPTIONS = { bom: false } as const;

/**
 * CSV (docs/exports.md): one row per submission, columns in form order with group paths,
 * repeats as `rep[i]/q` columns, select-multiples split on request, then the metadata; a
 * second header row of labels with `include_labels`. Each cursor batch is stringified by
 * csv-stringify as one string and written at once, then the writer waits while `out` is full:
 * one write per batch of 500 rows instead of a stream chunk per row (docs/exports.md,
 * "Streaming and memory").
 */
export async function writeCsv(plan: ExportPlan, o: ExportOptions, out: Writable, progress: Progress = () => undefined): Promise<void> {
  const tree = scopeTree(plan.fields);
  const columns: Column[] = csvColumns(tree, plan.repeatCounts, plan.choices, o);
  const meta = metadataColumns();
  // No cell, header or label runs as a spreadsheet formula (spreadsheet-cells.ts).
  const inert = formulaGuard(o.escapeFormulas);
  const head = [inert([...columns.map((c) => c.header), ...meta.map((c) => c.header)])];
  if (o.includeLabels) head.push(inert([...columns.map((c) => c.label), ...meta.map((c) => c.label)]));
  out.write(stringify(head, CSV_OPTIONS));
  await drained(out);
  let done = 0;
  for await (const batch of plan.rows()) {
    if (out.destroyed) break;
    const records = batch.map((row) => {
      const m = metadataOf(row);
      const answers = JSON.parse(row.json) as Record<string, unknown>;
      return inert([...columns.map((c) => c.cell(answers) ?? ''), ...meta.map((c) => c.cell(m) ?? '')]);
    });
    out.write(stringify(records, CSV_OPTIONS));
    progress((done += batch.length), plan.total);
    await drained(out);
  }
  if (!out.destroyed) out.end();
}

/**
 * XLSX (docs/exports.md): the first sheet holds the submissions (with `_index`), one sheet per
 * repeat holds its instances with `_index`, `_parent_index` (the `_index` of the row it belongs
 * to), `_parent_table_name` and `_submission__id`. exceljs's streaming WorkbookWriter writes
 * each sheet in one pass over the rows, one sheet after the other, so that nothing waits in
 * memory behind an unfinished sheet.
 */
export async function writeXlsx(plan: ExportPlan, o: ExportOptions, out: Writable, progress: Progress = () => undefined): Promise<void> {
  const tree = scopeTree(plan.fields);
  // Loaded on the first XLSX export only: exceljs is large, and most processes never write one.
  const ExcelJS = (await import('exceljs')).default;
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const taken = new Set<string>();
  const scopes: RepeatScope[] = [tree, ...allRepeats(tree)];
  const names = new Map(scopes.map((s) => [s.xpath, sheetName(s.xpath ? s.name : 'data', taken)]));
  const parents = new Map<string, RepeatScope>();
  for (const s of scopes) for (const r of s.repeats) parents.set(r.xpath, s);
  const passes = scopes.length;
  let done = 0;
  for (const scope of scopes) {
    const sheet = workbook.addWorksheet(names.get(scope.xpath)!);
    const cols = sheetColumns(scope, tree, plan.choices, o);
    const meta = scope.xpath ? [] : metadataColumns();
    const extra = scope.xpath ? ['_index', '_parent_index', '_parent_table_name', '_submission__id'] : ['_index'];
    sheet.addRow([...cols.map((c) => c.header), ...meta.map((c) => c.header), ...extra]).commit();
    if (o.includeLabels) sheet.addRow([...cols.map((c) => c.label), ...meta.map((c) => c.label), ...extra]).commit();
    const parentName = scope.xpath ? names.get(parents.get(scope.xpath)!.xpath)! : '';
    // Instance counters per scope, advanced in the same order in every pass, so that a repeat
    // row's `_parent_index` is the `_index` its parent row got on the parent's sheet.
    const counters = new Map<string, number>();
    const visit = (s: RepeatScope, record: Record<string, unknown>, index: number, parentIndex: number, row: SubmissionExportRow) => {
      if (s === scope) {
        const m = metadataOf(row);
        const cells = [...cols.map((c) => c.cell(record)), ...meta.map((c) => c.cell(m))];
        const tail = scope.xpath ? [index, parentIndex, parentName, row.id] : [index];
        sheet.addRow([...cells.map((v) => (v === null ? undefined : v)), ...tail]).commit();
        return;
      }
      for (const r of s.repeats) {
        if (!(scope.xpath === r.xpath || scope.xpath.startsWith(`${r.xpath}/`))) continue;
        const items = record[r.xpath];
        if (!Array.isArray(items)) continue;
        for (const item of items) {
          const n = (counters.get(r.xpath) ?? 0) + 1;
          counters.set(r.xpath, n);
          visit(r, item as Record<string, unknown>, n, index, row);
        }
      }
    };
    let submissionIndex = 0;
    for await (const batch of plan.rows()) {
      if (out.destroyed) break;
      for (const row of batch) visit(tree, JSON.parse(row.json) as Record<string, unknown>, ++submissionIndex, 0, row);
      progress((done += batch.length), plan.total * passes);
      await sheetDrained(sheet, out);
    }
    sheet.commit();
  }
  // exceljs's commit waits for `out` to finish, which a destroyed `out` (a client that left)
  // never does: the workbook would stay in memory for good.
  if (out.destroyed) return;
  await Promise.race([workbook.commit(), once(out, 'close')]);
}

/** Whether any field of the plan is split into choice columns (the choices must be known then). */
export function needsChoices(fields: FormField[], o: ExportOptions): FormField[] {
  return fields.filter((f) => isSplit(f, o));
}
