import type { Writable } from 'node:stream';
import type { ListCsvRow } from '../entity-attachments/entity-list-attachments.repository.js';
import { listCsvHeader, listCsvRecord } from '../entity-attachments/entity-list-csv.js';
import { sheetDrained } from './data-export.js';

/**
 * An entity list as XLSX (docs/entities.md, "Exports of a list"): one sheet, `entities`, with
 * the CSV's columns (`name`, `label`, `__version`, the properties), written by exceljs's
 * streaming writer batch by batch, waiting for the zip entry and `out` after each
 * (data-export.ts, sheetDrained), so memory holds about one batch whatever the list's size.
 * Cells are typed strings (the version a number): none is ever a formula.
 */
export async function writeEntityListXlsx(properties: readonly string[], batches: AsyncIterable<ListCsvRow[]>, out: Writable): Promise<void> {
  const ExcelJS = (await import('exceljs')).default;
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const sheet = workbook.addWorksheet('entities');
  sheet.addRow(listCsvHeader(properties)).commit();
  for await (const batch of batches) {
    if (out.destroyed) break;
    for (const row of batch) sheet.addRow(listCsvRecord(row)).commit();
    await sheetDrained(sheet, out);
  }
  // A client that left: nothing more to write (the zip's end would wait for a socket that is gone).
  if (out.destroyed) return;
  sheet.commit();
  await workbook.commit();
}
