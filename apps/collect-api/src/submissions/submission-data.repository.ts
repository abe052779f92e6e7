import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { CURSOR_BATCH, cursorRows, type CursorQuery } from '../database/cursor.js';
import type { ReadLease } from '../database/read-pool.js';
import { preparedQuery } from '../database/prepared-query.js';
import { SqlParams } from './data-query.js';

/** Which live submissions a read covers: forms (already permission-checked) and a condition. */
export interface SubmissionScope {
  formIds: number[];
  /** The SQL condition over `s` (submissions) and `u` (users), its values added to `p`. */
  where(p: SqlParams): string;
}

/**
 * The role check a data page's statement repeats when the form and role came from FormCache:
 * the page has rows only if the form is live and the user is a superuser or holds one of
 * `roles` on it, read in the statement's own snapshot.
 */
export interface AccessCheck {
  formId: number;
  userId: number;
  superuser: boolean;
  roles: readonly string[];
}

/** A live attachment as the submission JSON needs it (`attachmentJson`). */
export interface AttachmentRow {
  id: number;
  filename: string;
  name: string;
  mimetype: string;
  submissionId: number;
  formId: number;
}

/**
 * Submission JSON texts of a data read, in order, with what the service fills in: the texts
 * joined by commas, where each wanted `_geolocation` is the character GEOLOCATION_MARK and each
 * wanted `_attachments` ATTACHMENTS_MARK (control characters, which the JSON text of answers and
 * metadata can never hold unescaped); then, per submission, its geopoint answer, form and
 * attachment rows.
 */
export interface SubmissionDocs {
  /** Live submissions of the whole scope, in the snapshot of the statement (or cursor) that read the page. */
  total: number;
  /** With `snapshot` asked for (one-statement pages only): the statement's snapshot, for `stillCurrent`. */
  snapshot?: string | null;
  /** False when an AccessCheck failed (then there are no texts). */
  ok: boolean;
  /** How many submissions `text` holds. */
  n: number;
  text: string;
  /** The answer at each submission's geopoint xpath (any JSON value), null when not read. */
  geo: unknown[] | null;
  /** Each submission's form, when geopoints of several forms are read. */
  forms: number[] | null;
  attachments: Array<AttachmentRow[] | null> | null;
}

export const GEOLOCATION_MARK = '\u0001';
export const ATTACHMENTS_MARK = '\u0002';

interface DocRow {
  total: number;
  form_id: number;
  doc: string;
  geo: unknown;
  attachments: AttachmentRow[] | null;
}

interface PageRow {
  total: number;
  snapshot: string | null;
  /** Kept-count delta rows summed into `total` (0 when counted by a scan). */
  deltas: number;
  ok: boolean;
  n: number;
  text: string | null;
  geo: unknown[] | null;
  forms: number[] | null;
  attachments: Array<AttachmentRow[] | null> | null;
}

/**
 * The answers and metadata an export flattens (exports/): one row per submission. The answers
 * come as JSON text, parsed by the writer when it writes that row (docs/exports.md, "Streaming
 * and memory"): a batch of texts waits cheaply, the parsed objects live for one row only.
 */
export interface SubmissionExportRow {
  id: number;
  uuid: string;
  /** The stored answers' JSON text (`submissions.json::text`). */
  json: string;
  submission_time: string;
  version: string;
  submitted_by: string | null;
  form_id: number;
}

/** Whether SQL text names the `users` alias `u` (our own SQL: values are always parameters). */
const USES_USERS = /\bu\./;

/** The condition of a scope of every live submission of its forms (data-query.ts `whereSql` of no conditions). */
const ALL = 'true';

/** A page that read more kept-count delta rows than this has its form's rows folded (`foldCounts`). */
export const FOLD_AT = 16;

const TIME = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')`;

/**
 * The metadata members of the §2.2 submission JSON (submission-json.ts `buildSubmissionJson`),
 * in order, each as SQL giving its JSON text (never NULL). Written by concatenation:
 * json_build_object looked up the output function of each of its 34 arguments on every row,
 * about 10 µs a row. `_geolocation` and `_attachments` are left as marks (SubmissionDocs) and
 * filled in by the service, where buildSubmissionJson's own helpers make them: parsing the geopoint with a
 * regular expression in PostgreSQL cost about 20 µs a row (docs/data-api.md, "How it
 * runs").
 */
const METADATA_SQL: Array<[string, string]> = [
  ['formhub/uuid', `'"' || replace(f.uuid::text, '-', '') || '"'`], ['meta/instanceID', `to_json('uuid:' || s.uuid)::text`],
  ['_id', 's.id::text'], ['_uuid', 'to_json(s.uuid)::text'], ['_xform_id_string', 'to_json(f.id_string)::text'], ['_xform_id', 'f.id::text'],
  ['_status', 'to_json(s.status)::text'], ['_submission_time', `'"' || ${TIME('s.date_created')} || '"'`],
  ['_deleted_at', `COALESCE('"' || ${TIME('s.deleted_at')} || '"', 'null')`],
  ['_geolocation', `'${GEOLOCATION_MARK}'`], ['_attachments', `'${ATTACHMENTS_MARK}'`],
  ['_bamboo_dataset_id', `to_json(COALESCE(NULLIF(f.bamboo_dataset_id, ''), s.bamboo_dataset_id))::text`], ['_submitted_by', `COALESCE(to_json(u.username)::text, 'null')`],
  ['_version', 'to_json(s.version)::text'], ['_edited', 's.edited::text'], ['_tags', `'[]'`], ['_notes', `'[]'`],
];

/** `"key": ` + the member's SQL for each member, as one concatenation (adjacent literals merged). */
function membersSql(members: Array<[string, string]>): string {
  const parts: string[] = [];
  let literal = '';
  members.forEach(([key, sql], i) => {
    literal += `${i ? ', ' : ''}${JSON.stringify(key)}: `;
    const constant = /^'([^']*)'$/.exec(sql);
    if (constant) {
      literal += constant[1];
      return;
    }
    parts.push(`'${literal}'`, sql);
    literal = '';
  });
  if (literal) parts.push(`'${literal}'`);
  return parts.length ? parts.join(' || ') : `''`;
}

/**
 * The submission JSON built by PostgreSQL as text: the stored answers' text with the metadata
 * members appended, so a data page is one statement and no entity is hydrated
 * (docs/data-api.md, "How it runs"). With `fields`, only those answers and metadata members.
 */
function docSql(fields: string[] | null, p: SqlParams): string {
  const meta = METADATA_SQL.filter(([key]) => !fields || fields.includes(key));
  const metaText = membersSql(meta);
  if (!fields) return `(CASE WHEN s.json = '{}'::jsonb THEN '{' ELSE left(s.json::text, -1)${meta.length ? ` || ', '` : ''} END) || ${metaText} || '}'`;
  const answers = `(SELECT string_agg(to_json(e.key)::text || ': ' || e.value::text, ', ') FROM jsonb_each(s.json) e WHERE e.key = ANY(${p.add(fields)}::text[]))`;
  return meta.length ? `'{' || COALESCE(${answers} || ', ', '') || ${metaText} || '}'` : `'{' || COALESCE(${answers}, '') || '}'`;
}

/**
 * Texts of the prepared page statements by what varies in them (`docs`); the rest of the text is
 * fixed when `prepared` is set (no fields), so this holds a few entries.
 */
const PREPARED_TEXTS = new Map<string, string>();

/** The condition of an AccessCheck, uncorrelated: PostgreSQL evaluates it once per statement. */
function accessSql(c: AccessCheck, p: SqlParams): string {
  const form = p.add(c.formId);
  return `EXISTS (SELECT 1 FROM forms cf WHERE cf.id = ${form} AND cf.deleted_at IS NULL
    AND (${p.add(c.superuser)}::boolean OR EXISTS (SELECT 1 FROM form_roles cr WHERE cr.form_id = ${form} AND cr.user_id = ${p.add(c.userId)} AND cr.role = ANY(${p.add(c.roles)}::varchar[]))))`;
}

const ATTACHMENTS_SQL = `(SELECT json_agg(json_build_object('id', a.id, 'filename', a.filename, 'name', a.name, 'mimetype', a.mimetype, 'submissionId', a.submission_id, 'formId', a.form_id) ORDER BY a.id)
  FROM attachments a WHERE a.submission_id = s.id AND a.deleted_at IS NULL)`;

/**
 * Reads of submissions for the data API and the exports: filtering, sorting and paging happen
 * in PostgreSQL (docs/data-api.md); large reads stream through a server-side cursor so memory
 * stays flat whatever the count.
 */
@Injectable()
export class SubmissionDataRepository {
  private readonly logger = new Logger(SubmissionDataRepository.name);
  /** Forms whose kept-count rows this process is folding now (one fold per form at a time). */
  private readonly folding = new Set<number>();

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Starts `foldCounts` for each form not being folded here already, not awaited: called when
   * the page's statement is done, so the request holds no connection while the fold asks the
   * pool for one (docs/architecture.md, "Database connections").
   */
  private fold(formIds: number[]): void {
    for (const formId of formIds) {
      if (this.folding.has(formId)) continue;
      this.folding.add(formId);
      this.foldCounts(formId)
        .catch((err: unknown) => this.logger.warn({ err, formId }, 'could not fold the kept submission count; the next page read tries again'))
        .finally(() => this.folding.delete(formId));
    }
  }

  /**
   * FROM and WHERE of the scope; one statement's parameters in `p`. `users` is joined only when
   * the condition, the `order` (returned as SQL) or `users` asks for it: an unused LEFT JOIN is
   * removed by the planner, but too late for an index-only scan, so a plain count read every
   * row of the table (docs/data-api.md, "How it runs"). `count`: a scalar
   * query of the scope's size; for every live submission of the forms (no condition) the sum of
   * the counts the database keeps (migration 1764910000000), else `count(*)` of the scan: the
   * exact count read 10,000 heap rows of pages the visibility map did not mark yet
   * (docs/data-api.md, "How it runs"). `deltas`: for a kept count, a
   * scalar query of the delta rows it sums (FOLD_AT), else null.
   */
  private from(scope: SubmissionScope, p: SqlParams, opts: { order?: (p: SqlParams) => string; users?: boolean } = {}): { from: string; order: string; count: string; deltas: string | null } {
    const one = scope.formIds.length === 1;
    const formRef = one ? p.add(scope.formIds[0]) : p.add(scope.formIds);
    const forms = (col: string) => (one ? `${col} = ${formRef}` : `${col} = ANY(${formRef}::int[])`);
    const where = scope.where(p);
    const order = opts.order ? opts.order(p) : '';
    const whereUsers = USES_USERS.test(where);
    const sql = (users: boolean) => `FROM submissions s${users ? ' LEFT JOIN users u ON u.id = s.submitted_by_id' : ''} WHERE ${forms('s.form_id')} AND s.deleted_at IS NULL AND (${where})`;
    const kept = where === ALL;
    return {
      from: sql(opts.users || whereUsers || USES_USERS.test(order)),
      order,
      count: kept ? `SELECT COALESCE(sum(k.delta), 0)::int FROM submission_count_deltas k WHERE ${forms('k.form_id')}` : `SELECT count(*)::int ${sql(whereUsers)}`,
      deltas: kept ? `SELECT count(*)::int FROM submission_count_deltas k WHERE ${forms('k.form_id')}` : null,
    };
  }

  /** Live submissions in the scope; `query`: on a connection the caller holds (a cursor's, database/cursor.ts). */
  async count(scope: SubmissionScope, query: CursorQuery = (sql, values) => this.db.query(sql, values)): Promise<number> {
    if (!scope.formIds.length) return 0;
    const p = new SqlParams();
    const rows = (await query(`SELECT (${this.from(scope, p).count}) AS n`, p.values)) as Array<{ n: number }>;
    return rows[0]?.n ?? 0;
  }

  /**
   * Folds each form's kept-count delta rows into one (or none for 0): one statement that deletes
   * and re-inserts, so every snapshot sees the same sum. Concurrent folds are exact too: a row
   * another fold deleted first is skipped (READ COMMITTED re-check), and intake only inserts rows,
   * so it never waits on a fold. Errors are left to the caller (a fold can wait for the next read).
   */
  async foldCounts(formId: number): Promise<void> {
    // The new row (also for a sum of 0) records the fold as a change (migration 1764910000001):
    // a cached page built before the fold is checked against it, not against nothing.
    await preparedQuery(
      this.db,
      `WITH gone AS (DELETE FROM submission_count_deltas WHERE form_id = $1 RETURNING delta)
       INSERT INTO submission_count_deltas (form_id, delta) SELECT $1, COALESCE(sum(delta), 0) FROM gone HAVING count(*) > 0`,
      [formId],
    );
  }

  /**
   * Forms with more than `min` kept-count delta rows, most first, at most `limit`: what the
   * worker's SubmissionCountFolder folds, so a form nobody reads does not gather one row per
   * intake statement for ever (form 0 holds markers, not counts: left alone).
   */
  async formsToFold(min: number, limit: number): Promise<number[]> {
    const rows: Array<{ form_id: number }> = await this.db.query(
      `SELECT form_id FROM submission_count_deltas WHERE form_id <> 0 GROUP BY form_id HAVING count(*) > $1 ORDER BY count(*) DESC LIMIT $2`,
      [min, limit],
    );
    return rows.map((r) => r.form_id);
  }

  /**
   * Whether a page built in `snapshot` (pg_current_snapshot() text, from `docs` with
   * `snapshot`) is what the database shows now, and whether `check` holds now: no change row
   * of the form (or of form 0) that the snapshot did not see (migration 1764910000001). Only
   * rows of transactions at or after the snapshot's xmin can be unseen: an index range scan.
   */
  async stillCurrent(snapshot: string, check: AccessCheck): Promise<{ ok: boolean; current: boolean }> {
    const p = new SqlParams();
    const snap = p.add(snapshot);
    const sql = `SELECT ${accessSql(check, p)} AS ok, NOT EXISTS (SELECT 1 FROM submission_count_deltas k
      WHERE k.form_id IN (${p.add(check.formId)}, 0) AND k.xid >= pg_snapshot_xmin(${snap}::pg_snapshot) AND NOT pg_visible_in_snapshot(k.xid, ${snap}::pg_snapshot)) AS current`;
    const [row] = await preparedQuery<{ ok: boolean; current: boolean }>(this.db, sql, p.values);
    return row!;
  }

  /**
   * The submission JSON of the scope's rows in `order` from `offset`, at most `limit`: one
   * statement that also counts the scope (in its snapshot) and aggregates the page into one
   * text, so neither side handles a row (docs/data-api.md, "How it runs");
   * above CURSOR_BATCH, batches of rows through a cursor (counted in its transaction). `fields` keeps only
   * those keys. `geo`: form id → xpath of its geopoint, whose answers come in `geo` (an empty
   * map: none is read). With `check`, no text unless the check holds (`ok`). `prepared`: the
   * caller vouches that the statement's text is one of a fixed few (a plain page of one form:
   * no query, sort or fields), so it runs as a named prepared statement (database/prepared-query.ts).
   * `snapshot`: a one-statement page also returns its statement's snapshot (`stillCurrent`).
   */
  async *docs(scope: SubmissionScope, q: { order: (p: SqlParams) => string; offset: number; limit: number; fields: string[] | null; geo: Record<string, string>; check?: AccessCheck; prepared?: boolean; snapshot?: boolean; lease?: ReadLease }): AsyncGenerator<SubmissionDocs> {
    if (!scope.formIds.length) return;
    const p = new SqlParams();
    const { from, order, count, deltas } = this.from(scope, p, { order: q.order });
    const check = q.check ? accessSql(q.check, p) : 'true';
    const geoForms = Object.keys(q.geo);
    const geo = !geoForms.length ? 'NULL::jsonb'
      : geoForms.length === 1 && scope.formIds.length === 1 ? `s.json -> ${p.add(q.geo[geoForms[0]!])}::text`
      : `s.json -> (${p.add(JSON.stringify(q.geo))}::jsonb ->> s.form_id::text)`;
    const forms = geoForms.length > 1;
    const doc = docSql(q.fields, p);
    const attachments = !q.fields || q.fields.includes('_attachments') ? ATTACHMENTS_SQL : 'NULL::json';
    const rows = `SELECT s.form_id, ${doc} AS doc, ${geo} AS geo, ${attachments} AS attachments, row_number() OVER (ORDER BY ${order}) AS ord
      FROM (SELECT s.id ${from} AND ${check} ORDER BY ${order} OFFSET ${p.add(q.offset)} LIMIT ${p.add(q.limit)}) page
      JOIN submissions s ON s.id = page.id JOIN forms f ON f.id = s.form_id LEFT JOIN users u ON u.id = s.submitted_by_id
      ORDER BY ${order}`;
    if (q.limit > CURSOR_BATCH) {
      if (!q.lease) throw new Error('a page read through a cursor needs a read lease (database/read-slots.ts)');
      // The scope is counted on the cursor's connection, in its snapshot: a count from the pool
      // while the cursor holds a connection deadlocked once concurrent pages held them all
      // (database/cursor.ts; docs/architecture.md, "Database connections").
      let total = 0;
      const before = async (query: CursorQuery) => {
        total = await this.count(scope, query);
      };
      for await (const batch of cursorRows<DocRow>(q.lease, rows, p.values, { before })) {
        yield {
          total, ok: true, n: batch.length, text: batch.map((r) => r.doc).join(','),
          geo: geoForms.length ? batch.map((r) => r.geo) : null, forms: forms ? batch.map((r) => r.form_id) : null, attachments: batch.map((r) => r.attachments),
        };
      }
      return;
    }
    // One row whatever the page holds (PostgreSQL sorts the aggregates' input once for all).
    const sql = `SELECT (${count}) AS total, ${deltas ? `(${deltas})` : '0'} AS deltas, ${q.snapshot ? 'pg_current_snapshot()::text' : 'NULL::text'} AS snapshot, ${check} AS ok, count(*)::int AS n, string_agg(d.doc, ',' ORDER BY d.ord) AS text,
      ${geoForms.length ? 'json_agg(d.geo ORDER BY d.ord)' : 'NULL::json'} AS geo, ${forms ? 'json_agg(d.form_id ORDER BY d.ord)' : 'NULL::json'} AS forms,
      json_agg(d.attachments ORDER BY d.ord) AS attachments
      FROM (${rows}) d`;
    let text = sql;
    if (q.prepared) {
      // The same string object every time: preparedQuery finds the name by the text, and V8 keeps
      // a string's hash, where a freshly concatenated 3 KB text was flattened and hashed per page.
      const shape = `${from}\n${count}\n${order}\n${check}\n${geo}\n${attachments}\n${q.snapshot}`;
      text = PREPARED_TEXTS.get(shape) ?? sql;
      if (!PREPARED_TEXTS.has(shape)) PREPARED_TEXTS.set(shape, sql);
    }
    // A heavy read (query, sort, fields) runs on the caller's read lease: its own pool, with a
    // statement timeout (docs/security.md, "Streamed reads and heavy queries").
    const [row] = q.lease ? await q.lease.query<PageRow>(sql, p.values) : q.prepared ? await preparedQuery<PageRow>(this.db, text, p.values) : ((await this.db.query(text, p.values)) as PageRow[]);
    if (row!.deltas > FOLD_AT) this.fold(scope.formIds);
    yield { total: row!.total, snapshot: row!.snapshot, ok: row!.ok, n: row!.n, text: row!.text ?? '', geo: row!.geo, forms: row!.forms, attachments: row!.attachments };
  }

  /** The rows an export flattens, in `_id` order, streamed through a cursor on the lease's connection. */
  exportRows(scope: SubmissionScope, lease: ReadLease): AsyncGenerator<SubmissionExportRow[]> {
    const p = new SqlParams();
    const sql = `SELECT s.id, s.uuid, s.json::text AS json, ${TIME('s.date_created')} AS submission_time, s.version, u.username AS submitted_by, s.form_id
      ${this.from(scope, p, { users: true }).from} ORDER BY s.id`;
    return cursorRows<SubmissionExportRow>(lease, sql, p.values);
  }

  /**
   * For each repeat path (a jsonpath to its arrays, e.g. `$."rep"[*]."rep/sub"`), the most
   * items one instance of it holds in the scope: the number of indexed CSV columns.
   */
  async repeatCounts(scope: SubmissionScope, paths: string[], query: CursorQuery = (sql, values) => this.db.query(sql, values)): Promise<number[]> {
    if (!paths.length || !scope.formIds.length) return paths.map(() => 0);
    const p = new SqlParams();
    const { from } = this.from(scope, p);
    const cols = paths.map((path, i) => `max((SELECT max(jsonb_array_length(x)) FROM jsonb_path_query(s.json, ${p.add(path)}::jsonpath) x WHERE jsonb_typeof(x) = 'array')) AS r${i}`);
    const rows = (await query(`SELECT ${cols.join(', ')} ${from}`, p.values)) as Array<Record<string, number | null>>;
    return paths.map((_, i) => rows[0]?.[`r${i}`] ?? 0);
  }

  /**
   * For each jsonpath (`$."tags"` or `$."rep"[*]."rep/tags"`), the distinct whitespace-separated
   * values of the answers there in the scope, in text order, at most `max` each: the choices of
   * select-multiples that the form does not list. One scan of the scope for all the paths
   * (docs/exports.md, "Split select-multiples"). `query`: a read lease's, so that a client that
   * leaves cancels the scan (database/read-slots.ts).
   */
  async distinctTokens(scope: SubmissionScope, jsonPaths: string[], max = 1000, query: CursorQuery = (sql, values) => this.db.query(sql, values)): Promise<string[][]> {
    if (!scope.formIds.length || !jsonPaths.length) return jsonPaths.map(() => []);
    const p = new SqlParams();
    const { from } = this.from(scope, p);
    // The pattern is `\s+` in the SQL text (whitespace): in this template literal a lone backslash would be dropped, leaving `s+`.
    const rows = (await query(
      `SELECT d.i::int AS i, d.t FROM (
         SELECT d.i, d.t, row_number() OVER (PARTITION BY d.i ORDER BY d.t) AS rn
         FROM (SELECT DISTINCT x.i, t COLLATE "C" AS t
               FROM (SELECT s.json ${from}) s
               CROSS JOIN unnest(${p.add(jsonPaths)}::text[]) WITH ORDINALITY AS x(path, i)
               CROSS JOIN LATERAL jsonb_path_query(s.json, x.path::jsonpath) v
               CROSS JOIN LATERAL regexp_split_to_table(v #>> '{}', '\\s+') t
               WHERE t <> '') d
       ) d WHERE d.rn <= ${p.add(max)} ORDER BY 1, 2`,
      p.values,
    )) as Array<{ i: number; t: string }>;
    const out = jsonPaths.map((): string[] => []);
    for (const r of rows) out[r.i - 1]!.push(r.t);
    return out;
  }
}
