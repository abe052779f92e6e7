import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { MIN_ROLE } from '../forms/roles.js';
import { numericFields, orderSql, parseFields, parseQuery, parseSort, whereSql, type SqlParams } from './data-query.js';
import { attachmentJson } from './submission-json.js';
import { SubmissionDataRepository, type SubmissionDocRow, type SubmissionScope } from './submission-data.repository.js';

/** How json_build_object writes the member the service fills in. */
const ATTACHMENTS_SLOT = '"_attachments" : null';

/** What a data read asks for: the window and the raw `query`/`sort`/`fields` texts. */
export interface DataRead {
  offset: number;
  limit: number;
  /** The page number when paging by page (a page past the end is a 404 then). */
  page: number | null;
  query?: string;
  sort?: string;
  fields?: string;
}

/** A data page: the total and the submission JSON texts in batches, the first already read. */
export interface DataPage {
  total: number;
  batches: AsyncIterable<string[]>;
}

/** Form id → xpath of its first geopoint outside repeats (`_geolocation`, submission-record.ts `geolocationOf`). */
export function geopointXpaths(forms: Array<Pick<FormEntity, 'id' | 'fields'>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const form of forms) {
    const field = form.fields.find((f: FormField) => f.type === 'geopoint' && !f.repeat);
    if (field) out[String(form.id)] = field.xpath;
  }
  return out;
}

/**
 * The data API (docs/data-api.md): pages of the §2.2 submission JSON built by PostgreSQL,
 * filtered, sorted and paged there by `query`, `sort`, `fields`, `start`/`limit` or
 * `page`/`page_size`; readonly or above on the form.
 */
@Injectable()
export class SubmissionDataService {
  constructor(
    private readonly repo: SubmissionDataRepository,
    private readonly access: FormAccessService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  async formPage(user: AuthenticatedUser | undefined, formPk: string, read: DataRead): Promise<DataPage> {
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    return this.page([form], read);
  }

  /** One live submission's JSON text (the same builder as the pages), or 404. */
  async one(user: AuthenticatedUser | undefined, formPk: string, id: string): Promise<string> {
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    const n = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    if (!(n >= 1 && n <= 2_147_483_647)) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const scope: SubmissionScope = { formIds: [form.id], where: (p) => `s.id = ${p.add(n)}` };
    for await (const batch of this.repo.docs(scope, { order: () => 's.id', offset: 0, limit: 1, fields: null, geo: geopointXpaths([form]) })) {
      if (batch[0]) return this.withAttachments(batch[0], true);
    }
    throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
  }

  /**
   * A page over forms the caller was checked for (a form, or a merged dataset's forms). Numeric
   * comparison follows the first form's integer and decimal questions.
   */
  async page(forms: FormEntity[], read: DataRead): Promise<DataPage> {
    const conditions = parseQuery(read.query);
    const sort = parseSort(read.sort);
    const fields = parseFields(read.fields);
    const numeric = numericFields(forms.flatMap((f) => f.fields));
    const scope: SubmissionScope = { formIds: forms.map((f) => f.id), where: (p: SqlParams) => whereSql(conditions, numeric, p) };
    const docs = this.repo.docs(scope, { order: (p) => orderSql(sort, numeric, p), offset: read.offset, limit: read.limit, fields, geo: geopointXpaths(forms) });
    const withAttachments = !fields || fields.includes('_attachments');
    const [total, first] = await Promise.all([this.repo.count(scope), docs.next()]);
    const firstRows = first.done ? [] : first.value;
    if (read.page !== null && read.page > 1 && !firstRows.length) {
      await docs.return(undefined);
      throw new NotFoundException({ detail: 'Invalid page.' });
    }
    const texts = (rows: SubmissionDocRow[]) => rows.map((r) => this.withAttachments(r, withAttachments));
    async function* batches(): AsyncGenerator<string[]> {
      if (firstRows.length) yield texts(firstRows);
      for await (const rows of { [Symbol.asyncIterator]: () => docs }) yield texts(rows);
    }
    return { total, batches: batches() };
  }

  /**
   * Fills the `_attachments` member PostgreSQL left null (its URLs are built by media-urls.ts, as
   * everywhere else), in the place buildSubmissionJson gives it. The last occurrence is the
   * metadata's own: answers come first, and quotes inside JSON strings are escaped.
   */
  private withAttachments(row: SubmissionDocRow, wanted: boolean): string {
    if (!wanted) return row.doc;
    const at = row.doc.lastIndexOf(ATTACHMENTS_SLOT);
    if (at < 0) return row.doc;
    const list = (row.attachments ?? []).map((a) => attachmentJson(a, this.config.PUBLIC_BASE_URL));
    return `${row.doc.slice(0, at)}"_attachments" : ${JSON.stringify(list)}${row.doc.slice(at + ATTACHMENTS_SLOT.length)}`;
  }
}
