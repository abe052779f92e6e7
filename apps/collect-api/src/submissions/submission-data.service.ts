import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormCache } from '../forms/form-cache.js';
import { FORM_ROLES, MIN_ROLE, roleAtLeast } from '../forms/roles.js';
import { numericFields, orderSql, parseFields, parseQuery, parseSort, whereSql, type SqlParams } from './data-query.js';
import { attachmentJson } from './submission-json.js';
import type { SubmissionRecord } from './submission.entity.js';
import { geolocationOf } from './submission-record.js';
import { SubmissionDataRepository, type AccessCheck, type SubmissionDocRow, type SubmissionScope } from './submission-data.repository.js';

/** The roles that may read a form's data. */
const VIEW_ROLES = FORM_ROLES.filter((r) => roleAtLeast(r, MIN_ROLE.view));

/** How the repository writes the members the service fills in (submission-data.repository.ts `METADATA_SQL`). */
const GEOLOCATION_SLOT = '"_geolocation": null';
const ATTACHMENTS_SLOT = '"_attachments": null';
const NO_POINT = [null, null] as const;

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

/** Form id → its first geopoint outside repeats, the one `_geolocation` reads (submission-record.ts `geolocationOf`). */
function geopointFields(forms: Array<Pick<FormEntity, 'id' | 'fields'>>): Map<number, FormField> {
  const out = new Map<number, FormField>();
  for (const form of forms) {
    const field = form.fields.find((f: FormField) => f.type === 'geopoint' && !f.repeat);
    if (field) out.set(form.id, field);
  }
  return out;
}

/** What the service adds to the documents PostgreSQL built. */
interface Fill {
  /** The geopoint of each form, when `_geolocation` is wanted. */
  geo: Map<number, FormField> | null;
  attachments: boolean;
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
    private readonly forms: FormCache,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  /**
   * A form's page. The form and the caller's role come from FormCache first, and the page's
   * statement checks both again in its own snapshot (`AccessCheck`): a cached answer saves two
   * statements but never shows a page the database would refuse. With no rows (the check
   * failed, or the page is empty) the page is read again after FormAccessService's fresh check,
   * which answers 404/403 (docs/data-api.md).
   */
  async formPage(user: AuthenticatedUser | undefined, formPk: string, read: DataRead): Promise<DataPage> {
    const cached = await this.cachedAccess(user, formPk);
    if (cached) {
      const page = await this.page([cached.form], read, cached.check);
      if (page) return page;
    }
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    return (await this.page([form], read))!;
  }

  /** The form and an AccessCheck of the caller's view role when FormCache says it holds, else null. */
  private async cachedAccess(user: AuthenticatedUser | undefined, formPk: string): Promise<{ form: FormEntity; check: AccessCheck } | null> {
    if (!user || !/^\d{1,10}$/.test(formPk)) return null;
    const form = await this.forms.liveById(Number(formPk));
    if (!form) return null;
    if (!user.isSuperuser && !roleAtLeast(await this.forms.roleOf(form.id, user.id), MIN_ROLE.view)) return null;
    return { form, check: { formId: form.id, userId: user.id, superuser: user.isSuperuser, roles: VIEW_ROLES } };
  }

  /** One live submission's JSON text (the same builder as the pages), or 404. */
  async one(user: AuthenticatedUser | undefined, formPk: string, id: string): Promise<string> {
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    const n = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    if (!(n >= 1 && n <= 2_147_483_647)) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const scope: SubmissionScope = { formIds: [form.id], where: (p) => `s.id = ${p.add(n)}` };
    const fill: Fill = { geo: geopointFields([form]), attachments: true };
    for await (const batch of this.repo.docs(scope, { order: () => 's.id', offset: 0, limit: 1, fields: null, geo: xpaths(fill.geo) })) {
      if (batch[0]) return this.filled(batch[0], fill);
    }
    throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
  }

  /**
   * A page over forms the caller was checked for (a form, or a merged dataset's forms), or with
   * `check`, null when the page has no rows (the caller checks afresh and asks again). Numeric
   * comparison follows the first form's integer and decimal questions.
   */
  async page(forms: FormEntity[], read: DataRead): Promise<DataPage>;
  async page(forms: FormEntity[], read: DataRead, check: AccessCheck): Promise<DataPage | null>;
  async page(forms: FormEntity[], read: DataRead, check?: AccessCheck): Promise<DataPage | null> {
    const conditions = parseQuery(read.query);
    const sort = parseSort(read.sort);
    const fields = parseFields(read.fields);
    const numeric = numericFields(forms.flatMap((f) => f.fields));
    const scope: SubmissionScope = { formIds: forms.map((f) => f.id), where: (p: SqlParams) => whereSql(conditions, numeric, p) };
    const fill: Fill = { geo: !fields || fields.includes('_geolocation') ? geopointFields(forms) : null, attachments: !fields || fields.includes('_attachments') };
    const prepared = forms.length === 1 && read.query === undefined && read.sort === undefined && read.fields === undefined;
    const docs = this.repo.docs(scope, { order: (p) => orderSql(sort, numeric, p), offset: read.offset, limit: read.limit, fields, geo: xpaths(fill.geo), check, prepared });
    const first = await docs.next();
    const firstRows = first.done ? [] : first.value;
    if (!firstRows.length) {
      await docs.return(undefined);
      if (check) return null;
      if (read.page !== null && read.page > 1) throw new NotFoundException({ detail: 'Invalid page.' });
      return { total: await this.repo.count(scope), batches: (async function* () {})() };
    }
    const total = firstRows[0]!.total;
    const texts = (rows: SubmissionDocRow[]) => rows.map((r) => this.filled(r, fill));
    async function* batches(): AsyncGenerator<string[]> {
      if (firstRows.length) yield texts(firstRows);
      for await (const rows of { [Symbol.asyncIterator]: () => docs }) yield texts(rows);
    }
    return { total, batches: batches() };
  }

  /**
   * Fills the `_geolocation` and `_attachments` members PostgreSQL left null with what
   * buildSubmissionJson gives them (submission-record.ts `geolocationOf`, media-urls.ts), in
   * their places. The last occurrence of a slot is the metadata's own: answers come first, and
   * quotes inside JSON strings are escaped.
   */
  private filled(row: SubmissionDocRow, fill: Fill): string {
    const doc = row.doc;
    const at = fill.attachments ? doc.lastIndexOf(ATTACHMENTS_SLOT) : -1;
    const gt = fill.geo ? doc.lastIndexOf(GEOLOCATION_SLOT, at < 0 ? doc.length : at) : -1;
    if (at < 0 && gt < 0) return doc;
    let out = '';
    let from = 0;
    if (gt >= 0) {
      const field = fill.geo!.get(row.form_id);
      const point = field ? geolocationOf({ [field.xpath]: row.geo } as SubmissionRecord, [field]) : NO_POINT;
      out += `${doc.slice(from, gt)}"_geolocation": [${point[0]},${point[1]}]`;
      from = gt + GEOLOCATION_SLOT.length;
    }
    if (at >= 0) {
      const list = row.attachments ? row.attachments.map((a) => attachmentJson(a, this.config.PUBLIC_BASE_URL)) : [];
      out += `${doc.slice(from, at)}"_attachments": ${JSON.stringify(list)}`;
      from = at + ATTACHMENTS_SLOT.length;
    }
    return out + doc.slice(from);
  }
}

/** Form id → xpath of the geopoints to read, for the repository. */
function xpaths(geo: Map<number, FormField> | null): Record<string, string> {
  return Object.fromEntries([...(geo ?? [])].map(([id, field]) => [String(id), field.xpath]));
}
