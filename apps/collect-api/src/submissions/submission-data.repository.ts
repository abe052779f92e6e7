import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { CURSOR_BATCH, cursorRows } from '../database/cursor.js';
import { SqlParams } from './data-query.js';

/** Which live submissions a read covers: forms (already permission-checked) and a condition. */
export interface SubmissionScope {
  formIds: number[];
  /** The SQL condition over `s` (submissions) and `u` (users), its values added to `p`. */
  where(p: SqlParams): string;
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

/** One submission of a data page: its §2.2 JSON text (`_attachments` left null) and its attachment rows. */
export interface SubmissionDocRow {
  id: number;
  /** A JSON object's text; `_attachments` is null until the service fills it in. */
  doc: string;
  attachments: AttachmentRow[] | null;
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

const TIME = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')`;

/** The metadata members of the §2.2 submission JSON (submission-json.ts `buildSubmissionJson`), in order, as SQL. */
/**
 * The first two whitespace-separated parts of a geopoint answer when both are numbers (the
 * test of SQL_NUMBER_RE), as `g.m[1]`, `g.m[2]`: one match per row, where splitting and testing
 * each part cost half of a page's statement (docs/benchmarks.md, "Data page").
 */
const GEO_RE = String.raw`'^\s*(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s+(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(?:\s|$)'`;
const METADATA_SQL: Array<[string, string]> = [
  ['formhub/uuid', `replace(f.uuid::text, '-', '')`], ['meta/instanceID', `'uuid:' || s.uuid`],
  ['_id', 's.id'], ['_uuid', 's.uuid'], ['_xform_id_string', 'f.id_string'], ['_xform_id', 'f.id'], ['_status', 's.status'],
  ['_submission_time', TIME('s.date_created')], ['_deleted_at', TIME('s.deleted_at')], ['_geolocation', 'json_build_array(g.m[1]::float8, g.m[2]::float8)'],
  // Filled in by the service (submission-data.service.ts `withAttachments`), where buildSubmissionJson has it.
  ['_attachments', 'NULL::json'],
  ['_bamboo_dataset_id', 's.bamboo_dataset_id'], ['_submitted_by', 'u.username'], ['_version', 's.version'], ['_edited', 's.edited'],
  ['_tags', `'[]'::json`], ['_notes', `'[]'::json`],
];

/**
 * The submission JSON built by PostgreSQL as text: the stored answers' text with the metadata
 * members appended, so a data page is one statement and no entity is hydrated
 * (docs/benchmarks.md, "Data page"). With `fields`, only those answers and metadata members.
 * Needs `g.m`: the geopoint answer's two numbers (GEO_RE).
 */
function docSql(fields: string[] | null, p: SqlParams): string {
  const meta = METADATA_SQL.filter(([key]) => !fields || fields.includes(key));
  const metaText = `substr(json_build_object(${meta.map(([key, sql]) => `'${key}', ${sql}`).join(', ')})::text, 2)`;
  if (!fields) return `(CASE WHEN s.json = '{}'::jsonb THEN '{' ELSE left(s.json::text, -1) || ', ' END) || ${metaText}`;
  const answers = `(SELECT string_agg(to_json(e.key)::text || ' : ' || e.value::text, ', ') FROM jsonb_each(s.json) e WHERE e.key = ANY(${p.add(fields)}::text[]))`;
  return `'{' || COALESCE(${answers} || ', ', '') || ${metaText}`;
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
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** FROM and WHERE of the scope; one statement's parameters in `p`. */
  private from(scope: SubmissionScope, p: SqlParams): string {
    const forms = scope.formIds.length === 1 ? `s.form_id = ${p.add(scope.formIds[0])}` : `s.form_id = ANY(${p.add(scope.formIds)}::int[])`;
    return `FROM submissions s LEFT JOIN users u ON u.id = s.submitted_by_id
      WHERE ${forms} AND s.deleted_at IS NULL AND (${scope.where(p)})`;
  }

  /** Live submissions in the scope. */
  async count(scope: SubmissionScope): Promise<number> {
    if (!scope.formIds.length) return 0;
    const p = new SqlParams();
    const rows = (await this.db.query(`SELECT count(*)::int AS n ${this.from(scope, p)}`, p.values)) as Array<{ n: number }>;
    return rows[0]?.n ?? 0;
  }

  /**
   * The submission JSON of the scope's rows in `order` from `offset`, at most `limit`, as
   * batches of at most CURSOR_BATCH rows (one statement, or a cursor for more). `fields` keeps
   * only those keys. `geo`: form id → xpath of its geopoint.
   */
  async *docs(scope: SubmissionScope, q: { order: (p: SqlParams) => string; offset: number; limit: number; fields: string[] | null; geo: Record<string, string> }): AsyncGenerator<SubmissionDocRow[]> {
    if (!scope.formIds.length) return;
    const p = new SqlParams();
    const from = this.from(scope, p);
    const order = q.order(p);
    const geo = p.add(JSON.stringify(q.geo));
    const doc = docSql(q.fields, p);
    const attachments = !q.fields || q.fields.includes('_attachments') ? ATTACHMENTS_SQL : 'NULL::json';
    const sql = `SELECT s.id, ${doc} AS doc, ${attachments} AS attachments
      FROM (SELECT s.id ${from} ORDER BY ${order} OFFSET ${p.add(q.offset)} LIMIT ${p.add(q.limit)}) page
      JOIN submissions s ON s.id = page.id JOIN forms f ON f.id = s.form_id LEFT JOIN users u ON u.id = s.submitted_by_id
      LEFT JOIN LATERAL (SELECT regexp_match(s.json ->> (${geo}::jsonb ->> s.form_id::text), ${GEO_RE}) AS m) g ON true
      ORDER BY ${order}`;
    if (q.limit <= CURSOR_BATCH) {
      yield (await this.db.query(sql, p.values)) as SubmissionDocRow[];
      return;
    }
    yield* cursorRows<SubmissionDocRow>(this.db, sql, p.values);
  }

  /** The rows an export flattens, in `_id` order, streamed. */
  exportRows(scope: SubmissionScope): AsyncGenerator<SubmissionExportRow[]> {
    const p = new SqlParams();
    const sql = `SELECT s.id, s.uuid, s.json::text AS json, ${TIME('s.date_created')} AS submission_time, s.version, u.username AS submitted_by, s.form_id
      ${this.from(scope, p)} ORDER BY s.id`;
    return cursorRows<SubmissionExportRow>(this.db, sql, p.values);
  }

  /**
   * For each repeat path (a jsonpath to its arrays, e.g. `$."rep"[*]."rep/sub"`), the most
   * items one instance of it holds in the scope: the number of indexed CSV columns.
   */
  async repeatCounts(scope: SubmissionScope, paths: string[]): Promise<number[]> {
    if (!paths.length || !scope.formIds.length) return paths.map(() => 0);
    const p = new SqlParams();
    const from = this.from(scope, p);
    const cols = paths.map((path, i) => `max((SELECT max(jsonb_array_length(x)) FROM jsonb_path_query(s.json, ${p.add(path)}::jsonpath) x WHERE jsonb_typeof(x) = 'array')) AS r${i}`);
    const rows = (await this.db.query(`SELECT ${cols.join(', ')} ${from}`, p.values)) as Array<Record<string, number | null>>;
    return paths.map((_, i) => rows[0]?.[`r${i}`] ?? 0);
  }

  /**
   * The distinct space-separated values of the answers at a jsonpath (`$."tags"` or
   * `$."rep"[*]."rep/tags"`) in the scope, in text order, at most `max`: the choices of a
   * select-multiple that the form does not list.
   */
  async distinctTokens(scope: SubmissionScope, jsonPath: string, max = 1000): Promise<string[]> {
    if (!scope.formIds.length) return [];
    const p = new SqlParams();
    const from = this.from(scope, p);
    const rows = (await this.db.query(
      `SELECT DISTINCT t COLLATE "C" AS t FROM (SELECT s.json ${from}) s, jsonb_path_query(s.json, ${p.add(jsonPath)}::jsonpath) v,
        regexp_split_to_table(v #>> '{}', '\s+') t WHERE t <> '' ORDER BY 1 LIMIT ${p.add(max)}`,
      p.values,
    )) as Array<{ t: string }>;
    return rows.map((r) => r.t);
  }
}
