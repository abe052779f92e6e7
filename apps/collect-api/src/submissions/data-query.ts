import { FieldValidationError } from '@collect/contracts';
import type { FormField } from '../forms/form.entity.js';
import { safeNumericSql } from './number-answer.js';

/**
 * The data query API of `GET /api/v1/data/{pk}` (docs/data-api.md): `query`, `sort` and
 * `fields`, parsed with caps and compiled to parameterised SQL over the submissions table
 * aliased `s` (answers in `s.json`) joined to `users` aliased `u`. Names and values are always
 * bind parameters; only fixed SQL text and parameter numbers are spliced.
 */

/** Longest accepted text of `query`, `sort` or `fields` (JSON.parse is linear in it). */
export const MAX_QUERY_TEXT = 8_000;
/** At most this many fields in `query` and `sort`, operators per field, and `$in` values. */
export const MAX_QUERY_FIELDS = 32;
export const MAX_IN_VALUES = 100;
export const MAX_SELECTED_FIELDS = 500;

/** A question's xpath (`group/q`), as the submission JSON keys answers. */
const XPATH_RE = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*){0,31}$/;
const NUMBER_RE = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;
const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?Z?$/;

const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in'] as const;
type Operator = (typeof OPERATORS)[number];
const SQL_OP: Record<Exclude<Operator, '$eq' | '$ne' | '$in'>, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };

/** Metadata a query and a sort may name, and the keys `fields` may pick besides the answers. */
export const QUERY_METADATA = ['_id', '_submission_time', '_submitted_by'] as const;
type Scalar = string | number | boolean;

export interface Condition {
  field: string;
  op: Operator;
  value: Scalar | null | Scalar[];
}

export interface SortKey {
  field: string;
  direction: 1 | -1;
}

/** The fields whose answers compare and sort as numbers: integer and decimal questions outside repeats. */
export function numericFields(fields: readonly FormField[]): Set<string> {
  return new Set(fields.filter((f) => !f.repeat && (f.type === 'integer' || f.type === 'decimal')).map((f) => f.xpath));
}

function bad(param: string, message: string): never {
  throw new FieldValidationError({ [param]: [message] });
}

function parseJsonParam(param: string, text: string): unknown {
  if (text.length > MAX_QUERY_TEXT) bad(param, `Ensure this value has at most ${MAX_QUERY_TEXT} characters.`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return bad(param, 'Not valid JSON.');
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function checkFieldName(param: string, name: string): void {
  if ((QUERY_METADATA as readonly string[]).includes(name)) return;
  if (name.startsWith('_') || !XPATH_RE.test(name)) bad(param, `Unknown field "${name.slice(0, 100)}": use a question's xpath or one of ${QUERY_METADATA.join(', ')}.`);
}

/** `query`: `{"field": value}` or `{"field": {"$op": value, ...}}`; depth 2 at most. */
export function parseQuery(text: string | undefined): Condition[] {
  if (text === undefined) return [];
  const parsed = parseJsonParam('query', text);
  if (!isPlainObject(parsed)) bad('query', 'Expected a JSON object of field conditions.');
  const entries = Object.entries(parsed);
  if (entries.length > MAX_QUERY_FIELDS) bad('query', `At most ${MAX_QUERY_FIELDS} fields.`);
  const out: Condition[] = [];
  for (const [field, spec] of entries) {
    checkFieldName('query', field);
    if (spec === null || isScalar(spec)) {
      out.push({ field, op: '$eq', value: spec });
      continue;
    }
    if (!isPlainObject(spec)) bad('query', `The condition on "${field}" must be a value or an object of operators.`);
    const ops = Object.entries(spec);
    if (!ops.length) bad('query', `The condition on "${field}" names no operator.`);
    for (const [op, value] of ops) {
      if (!(OPERATORS as readonly string[]).includes(op)) bad('query', `Unknown operator "${op.slice(0, 20)}" on "${field}"; use ${OPERATORS.join(', ')}.`);
      if (op === '$in') {
        if (!Array.isArray(value) || !value.length || value.length > MAX_IN_VALUES || !value.every(isScalar)) {
          bad('query', `$in on "${field}" takes a list of 1 to ${MAX_IN_VALUES} plain values.`);
        }
        out.push({ field, op: '$in', value });
      } else if (op === '$eq' || op === '$ne') {
        if (value !== null && !isScalar(value)) bad('query', `${op} on "${field}" takes a plain value or null.`);
        out.push({ field, op: op as Operator, value });
      } else {
        if (!isScalar(value) || typeof value === 'boolean') bad('query', `${op} on "${field}" takes a number or a string.`);
        out.push({ field, op: op as Operator, value });
      }
    }
  }
  return out;
}

/** `sort`: `{"field": 1 | -1, ...}`, applied in key order; `_id` ascending breaks ties. */
export function parseSort(text: string | undefined): SortKey[] {
  if (text === undefined) return [];
  const parsed = parseJsonParam('sort', text);
  if (!isPlainObject(parsed)) bad('sort', 'Expected a JSON object such as {"age": -1}.');
  const entries = Object.entries(parsed);
  if (entries.length > MAX_QUERY_FIELDS) bad('sort', `At most ${MAX_QUERY_FIELDS} fields.`);
  return entries.map(([field, direction]) => {
    checkFieldName('sort', field);
    if (direction !== 1 && direction !== -1) bad('sort', `The direction of "${field}" must be 1 or -1.`);
    return { field, direction };
  });
}

/** `fields`: a JSON array of keys of the submission JSON (`_id` is always included). */
export function parseFields(text: string | undefined): string[] | null {
  if (text === undefined) return null;
  const parsed = parseJsonParam('fields', text);
  if (!Array.isArray(parsed) || parsed.length > MAX_SELECTED_FIELDS || !parsed.every((f) => typeof f === 'string' && f.length <= 255)) {
    bad('fields', `Expected a JSON array of at most ${MAX_SELECTED_FIELDS} field names.`);
  }
  return [...new Set(['_id', ...(parsed as string[])])];
}

/** Positional parameters shared by the pieces of one statement (`$1`, `$2`, ...). */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Answer as number, or NULL when the stored text is not a bounded number (never an error: docs/security.md, "Numbers, formulas and names"). */
function numericAnswer(key: string): string {
  return safeNumericSql(`(s.json ->> ${key})`);
}

/** `YYYY-MM-DD[THH:MM[:SS]][Z]`, UTC, to whole seconds since the epoch. */
function parseTime(field: string, value: unknown): number {
  const m = typeof value === 'string' ? TIME_RE.exec(value) : null;
  const t = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)) : NaN;
  if (!m || Number.isNaN(t) || new Date(t).getUTCDate() !== +m[3]) bad('query', `${field} takes a UTC time as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS.`);
  return t / 1000;
}

function parseId(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) bad('query', '_id takes integers.');
  return n;
}

/**
 * One condition as SQL. Answers: equality is JSON containment (`s.json @> {"f": "v"}`), which the
 * GIN index `submissions_json_path_idx` answers (migration 1764700000000); numbers are matched
 * in their plain text form (`20`, not `20.0`). Order operators compare numerically on integer
 * and decimal questions (a non-number answer never matches) and as byte-ordered text otherwise.
 * A missing answer matches only `$ne` and `$eq: null`. `_submission_time` compares at whole
 * seconds, as it is shown, through ranges on `date_created` (an index range scan).
 */
function conditionSql(c: Condition, numeric: Set<string>, p: SqlParams): string {
  if (c.field === '_id') {
    if (c.op === '$in') return `s.id = ANY(${p.add((c.value as Scalar[]).map(parseId))}::int[])`;
    if (c.value === null) return c.op === '$ne' ? 'true' : 'false';
    const v = p.add(parseId(c.value));
    return c.op === '$eq' ? `s.id = ${v}` : c.op === '$ne' ? `s.id <> ${v}` : `s.id ${SQL_OP[c.op as keyof typeof SQL_OP]} ${v}`;
  }
  if (c.field === '_submission_time') {
    if (c.value === null) return c.op === '$ne' ? 'true' : 'false';
    const second = (t: number, plus = 0) => `to_timestamp(${p.add(t + plus)})`;
    const within = (t: number) => `(s.date_created >= ${second(t)} AND s.date_created < ${second(t, 1)})`;
    if (c.op === '$in') return `(${(c.value as Scalar[]).map((v) => within(parseTime(c.field, v))).join(' OR ')})`;
    const t = parseTime(c.field, c.value);
    switch (c.op) {
      case '$eq': return within(t);
      case '$ne': return `NOT ${within(t)}`;
      case '$gt': return `s.date_created >= ${second(t, 1)}`;
      case '$gte': return `s.date_created >= ${second(t)}`;
      case '$lt': return `s.date_created < ${second(t)}`;
      default: return `s.date_created < ${second(t, 1)}`;
    }
  }
  if (c.field === '_submitted_by') {
    if (c.op === '$in') return `u.username = ANY(${p.add((c.value as Scalar[]).map(String))}::text[])`;
    if (c.value === null) return c.op === '$ne' ? 'u.username IS NOT NULL' : 'u.username IS NULL';
    const v = p.add(String(c.value));
    if (c.op === '$eq') return `u.username = ${v}`;
    if (c.op === '$ne') return `u.username IS DISTINCT FROM ${v}`;
    return `u.username COLLATE "C" ${SQL_OP[c.op as keyof typeof SQL_OP]} ${v}::text COLLATE "C"`;
  }
  const contains = (v: Scalar) => `s.json @> ${p.add(JSON.stringify({ [c.field]: String(v) }))}::jsonb`;
  switch (c.op) {
    case '$eq': return c.value === null ? `NOT (s.json ? ${p.add(c.field)})` : contains(c.value as Scalar);
    case '$ne': return c.value === null ? `s.json ? ${p.add(c.field)}` : `NOT ${contains(c.value as Scalar)}`;
    case '$in': return `(${(c.value as Scalar[]).map(contains).join(' OR ')})`;
  }
  const op = SQL_OP[c.op];
  const key = p.add(c.field);
  if (numeric.has(c.field)) {
    const n = typeof c.value === 'number' ? c.value : NUMBER_RE.test(String(c.value)) ? Number(c.value) : NaN;
    if (!Number.isFinite(n)) bad('query', `${c.op} on the number field "${c.field}" takes a number.`);
    return `${numericAnswer(key)} ${op} ${p.add(String(n))}::numeric`;
  }
  return `(s.json ->> ${key}) COLLATE "C" ${op} ${p.add(String(c.value))}::text COLLATE "C"`;
}

/** The conditions ANDed, as one SQL condition (`true` for none). */
export function whereSql(conditions: Condition[], numeric: Set<string>, p: SqlParams): string {
  return conditions.length ? conditions.map((c) => `(${conditionSql(c, numeric, p)})`).join(' AND ') : 'true';
}

/**
 * ORDER BY of the sort keys, then `s.id`. A missing answer sorts before any value (ascending),
 * as in the Django implementation's MongoDB-style sort; numbers sort as numbers on integer and
 * decimal questions, the rest as byte-ordered text.
 */
export function orderSql(sort: SortKey[], numeric: Set<string>, p: SqlParams): string {
  const parts = sort.map(({ field, direction }) => {
    const dir = direction === 1 ? 'ASC NULLS FIRST' : 'DESC NULLS LAST';
    if (field === '_id') return `s.id ${direction === 1 ? 'ASC' : 'DESC'}`;
    if (field === '_submission_time') return `s.date_created ${dir}`;
    if (field === '_submitted_by') return `u.username COLLATE "C" ${dir}`;
    const key = p.add(field);
    return numeric.has(field) ? `${numericAnswer(key)} ${dir}` : `(s.json ->> ${key}) COLLATE "C" ${dir}`;
  });
  if (!sort.some((k) => k.field === '_id')) parts.push('s.id ASC');
  return parts.join(', ');
}
