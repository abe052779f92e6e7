import { Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import { tokenAllowsForm, type AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormCache } from '../forms/form-cache.js';
import { FORM_ROLES, MIN_ROLE, roleAtLeast } from '../forms/roles.js';
import { numericFields, orderSql, parseFields, parseQuery, parseSort, whereSql, type SqlParams } from './data-query.js';
import { attachmentJson } from './submission-json.js';
import type { SubmissionRecord } from './submission.entity.js';
import { geolocationOf } from './submission-record.js';
import { CURSOR_BATCH } from '../database/cursor.js';
import type { ReadLease } from '../database/read-pool.js';
import { DataPageCache, pageEtag } from './data-page-cache.js';
import { ATTACHMENTS_MARK, GEOLOCATION_MARK, SubmissionDataRepository, type AccessCheck, type SubmissionDocs, type SubmissionScope } from './submission-data.repository.js';

/** The roles that may read a form's data. */
const VIEW_ROLES = FORM_ROLES.filter((r) => roleAtLeast(r, MIN_ROLE.view));

/** The marks the repository leaves for the members the service fills in. */
const MARKS = new RegExp(`[${GEOLOCATION_MARK}${ATTACHMENTS_MARK}]`, 'g');
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
  /** The caller's read slot (database/read-slots.ts): required when `heavyRead` says so. */
  lease?: ReadLease;
}

/**
 * Whether a read runs on a read slot (docs/security.md, "Streamed reads and heavy queries"): a
 * page streamed through a cursor, or one filtered, sorted or projected by the caller.
 */
export function heavyRead(read: Pick<DataRead, 'limit' | 'query' | 'sort' | 'fields'>): boolean {
  return read.limit > CURSOR_BATCH || !plain(read);
}

/**
 * A data page: the total and the submission JSON texts in batches, the first already read; or,
 * for a page of one statement that is kept (DataPageCache), its whole body, sent in one write.
 */
export type DataPage = StreamedPage | { total: number; body: Buffer; etag: string; batches?: undefined };
export interface StreamedPage {
  total: number;
  batches: AsyncIterable<string[]>;
  body?: undefined;
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
    private readonly pages: DataPageCache,
    private readonly config: CollectConfig,
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
      const kept = await this.keptPage(cached, read);
      if (kept !== 'refused') {
        if (kept) return kept;
        const page = await this.page([cached.form], read, cached.check);
        if (page) return page;
      }
    }
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    return (await this.page([form], read))!;
  }

  /**
   * A plain page this process built before (DataPageCache), when the database says, in one
   * statement, that nothing the page shows changed since its snapshot and that the caller's role
   * holds (SubmissionDataRepository.stillCurrent); 'refused' when the role or form check fails
   * (the caller checks afresh, which answers 404/403), null when there is no current page.
   */
  private async keptPage(cached: { form: FormEntity; check: AccessCheck }, read: DataRead): Promise<DataPage | 'refused' | null> {
    if (!plain(read)) return null;
    const key = DataPageCache.key(cached.form, read.offset, read.limit);
    const page = this.pages.get(key);
    if (!page) return null;
    const { ok, current } = await this.repo.stillCurrent(page.snapshot, cached.check);
    if (!ok) return 'refused';
    if (!current) {
      this.pages.delete(key);
      return null;
    }
    return { total: page.total, body: page.body, etag: page.etag };
  }

  /** The form and an AccessCheck of the caller's view role when FormCache says it holds, else null. */
  private async cachedAccess(user: AuthenticatedUser | undefined, formPk: string): Promise<{ form: FormEntity; check: AccessCheck } | null> {
    if (!user || !/^\d{1,10}$/.test(formPk)) return null;
    const form = await this.forms.liveById(Number(formPk));
    if (!form) return null;
    if (!tokenAllowsForm(user, form.id) || (!user.isSuperuser && !roleAtLeast(await this.forms.roleOf(form.id, user.id), MIN_ROLE.view))) return null;
    return { form, check: { formId: form.id, userId: user.id, superuser: user.isSuperuser, roles: VIEW_ROLES } };
  }

  /** One live submission's JSON text (the same builder as the pages), or 404. */
  async one(user: AuthenticatedUser | undefined, formPk: string, id: string): Promise<string> {
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    const n = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    if (!(n >= 1 && n <= 2_147_483_647)) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const scope: SubmissionScope = { formIds: [form.id], where: (p) => `s.id = ${p.add(n)}` };
    const geo = geopointFields([form]);
    for await (const batch of this.repo.docs(scope, { order: () => 's.id', offset: 0, limit: 1, fields: null, geo: xpaths(geo) })) {
      if (batch.n) return this.filled(batch, geo);
    }
    throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
  }

  /**
   * A page over forms the caller was checked for (a form, or a merged dataset's forms), or with
   * `check`, null when the page has no rows (the caller checks afresh and asks again). Numeric
   * comparison follows the first form's integer and decimal questions.
   */
  async page(forms: FormEntity[], read: DataRead): Promise<StreamedPage>;
  async page(forms: FormEntity[], read: DataRead, check: AccessCheck): Promise<DataPage | null>;
  async page(forms: FormEntity[], read: DataRead, check?: AccessCheck): Promise<DataPage | null> {
    const conditions = parseQuery(read.query);
    const sort = parseSort(read.sort);
    const fields = parseFields(read.fields);
    const numeric = numericFields(forms.flatMap((f) => f.fields));
    const scope: SubmissionScope = { formIds: forms.map((f) => f.id), where: (p: SqlParams) => whereSql(conditions, numeric, p) };
    const geo = !fields || fields.includes('_geolocation') ? geopointFields(forms) : null;
    const prepared = forms.length === 1 && plain(read);
    // A checked plain page of one statement may be kept for the next reader (keptPage).
    const keep = prepared && check !== undefined && read.limit <= CURSOR_BATCH;
    const docs = this.repo.docs(scope, { order: (p) => orderSql(sort, numeric, p), offset: read.offset, limit: read.limit, fields, geo: xpaths(geo), check, prepared, snapshot: keep, lease: read.lease });
    const first = await docs.next();
    const batch = first.done ? null : first.value;
    if (!batch?.n) {
      await docs.return(undefined);
      if (check && !batch?.ok) return null;
      if (read.page !== null && read.page > 1) throw new NotFoundException({ detail: 'Invalid page.' });
      return { total: batch?.total ?? (await this.repo.count(scope, read.lease?.query)), batches: (async function* () {})() };
    }
    // Counted with the page, on its connection: asking the pool for a count here, while `docs`
    // holds a cursor's connection, deadlocked (docs/architecture.md, "Database connections").
    const total = batch.total;
    if (keep && batch.snapshot) {
      await docs.return(undefined);
      const body = Buffer.from(`[${this.filled(batch, geo)}]`);
      const etag = pageEtag(body, total);
      this.pages.set(DataPageCache.key(forms[0]!, read.offset, read.limit), { snapshot: batch.snapshot, total, body, etag });
      return { total, body, etag };
    }
    const filled = (b: SubmissionDocs) => [this.filled(b, geo)];
    // A consumer that stops at the first batch (its client left) ends this generator before the
    // loop below ever takes `docs`: `docs` is returned here, or its cursor keeps its connection.
    async function* batches(): AsyncGenerator<string[]> {
      try {
        yield filled(batch!);
        for await (const more of { [Symbol.asyncIterator]: () => docs }) if (more.n) yield filled(more);
      } finally {
        await docs.return(undefined);
      }
    }
    return { total, batches: batches() };
  }

  /**
   * The texts with their `_geolocation` and `_attachments` marks replaced, in order, by what
   * buildSubmissionJson gives those members (submission-record.ts `geolocationOf`,
   * media-urls.ts): one pass over the text, no per-row text from the driver.
   */
  private filled(docs: SubmissionDocs, geo: Map<number, FormField> | null): string {
    const text = docs.text;
    const single = geo && geo.size === 1 ? geo.values().next().value! : null;
    let out = '';
    let from = 0;
    let g = 0;
    let a = 0;
    for (MARKS.lastIndex = 0; MARKS.exec(text) !== null; ) {
      const at = MARKS.lastIndex - 1;
      out += text.slice(from, at);
      from = at + 1;
      if (text[at] === GEOLOCATION_MARK) {
        const i = g++;
        const field = docs.forms ? geo?.get(docs.forms[i]!) : single;
        const raw = docs.geo ? docs.geo[i] : undefined;
        const point = field ? geolocationOf({ [field.xpath]: raw } as SubmissionRecord, [field]) : NO_POINT;
        out += `[${point[0]},${point[1]}]`;
      } else {
        const rows = docs.attachments?.[a++];
        out += rows ? JSON.stringify(rows.map((r) => attachmentJson(r, this.config.PUBLIC_BASE_URL))) : '[]';
      }
    }
    return from ? out + text.slice(from) : text;
  }
}

/** No query, sort or fields: the page every integrator reads, kept (DataPageCache) and prepared. */
function plain(read: Pick<DataRead, 'query' | 'sort' | 'fields'>): boolean {
  return read.query === undefined && read.sort === undefined && read.fields === undefined;
}

/** Form id → xpath of the geopoints to read, for the repository. */
function xpaths(geo: Map<number, FormField> | null): Record<string, string> {
  return Object.fromEntries([...(geo ?? [])].map(([id, field]) => [String(id), field.xpath]));
}
