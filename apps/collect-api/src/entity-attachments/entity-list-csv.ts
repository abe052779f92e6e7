import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { ListCsvRow, ListHead } from './entity-list-attachments.repository.js';
import { drainOrClose } from '../database/drain.js';

/** The columns before the properties, as ODK Central serves a list to a follow-up form. */
export const LIST_CSV_FIXED_COLUMNS = ['name', 'label', '__version'] as const;

/**
 * The manifest hash of a list (`md5:<hex>`): the list's id, its revision (raised in the same
 * transaction as every create, update and delete of its entities) and its properties (the CSV's
 * columns), so the hash changes exactly when the CSV would, and computing it reads no entity
 * (docs/entities.md, "The list's hash").
 */
export function listHash(head: Pick<ListHead, 'id' | 'revision' | 'properties'>): string {
  return `md5:${createHash('md5').update(JSON.stringify(['entity-list', head.id, head.revision, head.properties])).digest('hex')}`;
}

/** The header row of a list's CSV. */
export function listCsvHeader(properties: readonly string[]): string[] {
  return [...LIST_CSV_FIXED_COLUMNS, ...properties];
}

/** One entity as a CSV record (a missing property is an empty cell). */
export function listCsvRecord(row: ListCsvRow): Array<string | number> {
  return [row.name, row.label, row.version, ...row.values.map((v) => v ?? '')];
}

/** RFC 4180 as csv-stringify writes it by default: `,`, `"` quoting when needed, LF, no BOM (as the submission CSV). */
const CSV_OPTIONS = { bom: false } as const;

/**
 * Writes a list's CSV: the header, then each cursor batch stringified as one string and written
 * at once, waiting while `out` holds more than its buffer, so memory holds about one batch
 * whatever the list's size (docs/entities.md, "Follow-up forms and their list attachment").
 * `cells` turns each record before it is written (the downloads' formula guard); the form
 * attachment writes the values as stored, since ODK clients compare them.
 */
export async function writeListCsv(properties: readonly string[], batches: AsyncIterable<ListCsvRow[]>, out: Writable, cells: <T>(row: T[]) => T[] = (row) => row): Promise<void> {
  out.write(stringify([cells(listCsvHeader(properties))], CSV_OPTIONS));
  for await (const batch of batches) {
    if (out.destroyed) break;
    out.write(stringify(batch.map((r) => cells(listCsvRecord(r))), CSV_OPTIONS));
    if (out.writableNeedDrain && !out.destroyed) await drainOrClose(out);
  }
  if (!out.destroyed) out.end();
}
