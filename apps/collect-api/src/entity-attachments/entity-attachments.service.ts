import { Injectable, NotFoundException } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { ReadLease } from '../database/read-pool.js';
import type { FormEntity } from '../forms/form.entity.js';
import { externalCsvNames } from '../forms/external-instances.js';
import { setInertHeaders } from '../storage/served-content.js';
import { EntityListAttachmentsRepository, type ListCsvRow, type ListHead } from './entity-list-attachments.repository.js';
import { listHash, writeListCsv } from './entity-list-csv.js';

/** A list a form gets as an attachment: its file name in the form, its hash and the list. */
export interface ListAttachment {
  filename: string;
  hash: string;
  list: ListHead;
}

/** A list being read: its head (as the read's snapshot has it) and its live entities in batches. */
export interface OpenList {
  head: ListHead;
  batches: AsyncIterable<ListCsvRow[]>;
  close(): Promise<void>;
}

/** An XForm's text as scanned last, per form: the manifest of a busy form scans it once. */
const SCANNED_MAX = 1_000;

/**
 * Follow-up forms' list attachments (docs/entities.md, "Follow-up forms and their list
 * attachment"): a form whose XForm loads `<name>.csv` (select_one_from_file, csv-external,
 * pulldata) and whose owner has a list of that name gets the list's live entities as that file,
 * generated when downloaded; the manifest names it with `type="entityList"` and the list's hash.
 */
@Injectable()
export class EntityAttachmentsService {
  private readonly scanned = new Map<number, { xml: string; names: string[] }>();

  constructor(private readonly repo: EntityListAttachmentsRepository) {}

  /** The form's list attachments, in the order the XForm names them (no CSV file named: no query). */
  async ofForm(form: FormEntity): Promise<ListAttachment[]> {
    const names = this.csvNames(form);
    if (!names.length) return [];
    const lists = new Map((await this.repo.listsNamed(form.ownerId, names)).map((l) => [l.name, l]));
    return names.flatMap((name) => {
      const list = lists.get(name);
      return list ? [{ filename: `${name}.csv`, hash: listHash(list), list }] : [];
    });
  }

  /** The attachment `filename` of the form, or 404 (the form names no such file, or its owner has no such list). */
  async attachment(form: FormEntity, filename: string): Promise<ListAttachment> {
    const name = filename.endsWith('.csv') ? filename.slice(0, -4) : null;
    const found = name !== null && this.csvNames(form).includes(name) ? (await this.ofForm(form)).find((a) => a.filename === filename) : undefined;
    if (!found) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return found;
  }

  /**
   * The list's rows on the caller's read lease (database/read-slots.ts), with the list's head as
   * the cursor's snapshot has it: the first batch is read before this returns, so the caller
   * sends status and headers (ETag = that head's hash) only once the read has begun, and a list
   * deleted meanwhile is still a 404. `close` ends the cursor (also when the rows were not read).
   */
  async openRows(listId: number, lease: ReadLease): Promise<OpenList> {
    let head: ListHead | null = null;
    const rows = this.repo.csvRows(lease, listId, (h) => (head = h))[Symbol.asyncIterator]();
    const close = async () => void (await rows.return?.(undefined));
    const first = await rows.next().catch(async (err: unknown) => {
      await close();
      throw err;
    });
    const seen = head as ListHead | null;
    if (!seen) {
      await close();
      throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    }
    // A writer that stops early (its client left) ends the cursor at once, whatever it awaits next.
    async function* batches(): AsyncGenerator<ListCsvRow[]> {
      try {
        if (first.done) return;
        yield first.value;
        for (let next = await rows.next(); !next.done; next = await rows.next()) yield next.value;
      } finally {
        await close();
      }
    }
    return { head: seen, batches: batches(), close };
  }

  /**
   * Streams the list's CSV to `res` (openRows). `cells`: the formula guard of the downloads;
   * the form attachment leaves values as stored, since ODK clients compare them.
   */
  async streamCsv(listId: number, lease: ReadLease, res: ServerResponse, o: { downloadName: (head: ListHead) => string; cells?: <T>(row: T[]) => T[] }): Promise<void> {
    const open = await this.openRows(listId, lease);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('ETag', `"${listHash(open.head)}"`);
    setInertHeaders(res, o.downloadName(open.head));
    try {
      await writeListCsv(open.head.properties, open.batches, res, o.cells);
    } catch (err) {
      res.destroy(err as Error);
    } finally {
      await open.close();
    }
  }

  /** The CSV names the form's XForm loads, scanned once per form definition. */
  private csvNames(form: FormEntity): string[] {
    const hit = this.scanned.get(form.id);
    if (hit && hit.xml === form.xml) return hit.names;
    const names = externalCsvNames(form.xml);
    if (this.scanned.size >= SCANNED_MAX) this.scanned.delete(this.scanned.keys().next().value!);
    this.scanned.set(form.id, { xml: form.xml, names });
    return names;
  }
}
