import { FieldValidationError } from '@collect/contracts';
import type { DataviewFilter } from './dataset.entities.js';

export const DATAVIEW_OPERATORS = ['=', '>', '<', '>=', '<=', '<>', '!='] as const;
const COLUMN_RE = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/;
const NUMBER_RE = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;
/** The same number test in SQL (a constant, never user input). */
const SQL_NUMBER_RE = `'^\\s*-?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?\\s*$'`;

/** Accepts a list or its JSON encoding (form posts send JSON strings); throws 400 on anything else. */
export function parseDataviewQuery(raw: unknown): DataviewFilter[] {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new FieldValidationError({ query: ['Must be a JSON list of {column, filter, value, condition?}.'] });
    }
  }
  if (!Array.isArray(value)) throw new FieldValidationError({ query: ['Must be a list of {column, filter, value, condition?}.'] });
  const problems: string[] = [];
  const out: DataviewFilter[] = [];
  value.forEach((item, i) => {
    const f = (item && typeof item === 'object' ? item : {}) as Record<string, unknown>;
    if (typeof f.column !== 'string' || !COLUMN_RE.test(f.column)) problems.push(`[${i}].column: a field name or xpath.`);
    if (!(DATAVIEW_OPERATORS as readonly unknown[]).includes(f.filter)) problems.push(`[${i}].filter: one of ${DATAVIEW_OPERATORS.join(' ')}.`);
    if (!(typeof f.value === 'string' || (typeof f.value === 'number' && Number.isFinite(f.value)))) problems.push(`[${i}].value: a string or a number.`);
    if (f.condition !== undefined && f.condition !== 'and' && f.condition !== 'or') problems.push(`[${i}].condition: "and" or "or".`);
    if (!problems.length) {
      out.push({ column: f.column as string, filter: f.filter as DataviewFilter['filter'], value: f.value as string | number, ...(f.condition ? { condition: f.condition as 'and' | 'or' } : {}) });
    }
  });
  if (out.length > 50) problems.push('At most 50 filters.');
  if (problems.length) throw new FieldValidationError({ query: problems });
  return out;
}

export function parseDataviewColumns(raw: unknown): string[] {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new FieldValidationError({ columns: ['Must be a JSON list of field names.'] });
    }
  }
  if (!Array.isArray(value) || !value.length || value.some((c) => typeof c !== 'string' || !COLUMN_RE.test(c))) {
    throw new FieldValidationError({ columns: ['A non-empty list of field names (xpaths).'] });
  }
  return [...new Set(value as string[])];
}

export interface CompiledWhere {
  /** SQL with TypeORM named parameters (`:dv_0`), for `.andWhere(sql, params)`. */
  sql: string;
  params: Record<string, string>;
}

/**
 * Compiles dataview filters to a parameterised condition over a jsonb column (default
 * `s.json`): column names and values are always parameters, never spliced into the SQL.
 * Comparison is numeric when both the stored answer and the filter value are numbers, text
 * (byte order) otherwise. Items with `condition: "or"` form one OR group, ANDed with the rest.
 * A missing answer never matches, except for `<>`/`!=` where "missing" differs from anything.
 */
export function compileDataviewQuery(filters: DataviewFilter[], jsonColumn = 's.json', prefix = 'dv'): CompiledWhere {
  const params: Record<string, string> = {};
  const and: string[] = [];
  const or: string[] = [];
  filters.forEach((f, i) => {
    const col = `${prefix}_c${i}`;
    const val = `${prefix}_v${i}`;
    params[col] = f.column;
    params[val] = String(f.value);
    const op = f.filter === '!=' ? '<>' : f.filter;
    const field = `(${jsonColumn} ->> :${col})`;
    const negative = op === '<>';
    const text = `(${field} COLLATE "C" ${op} CAST(:${val} AS text) COLLATE "C")`;
    const numericValue = typeof f.value === 'number' || NUMBER_RE.test(f.value);
    const cmp = numericValue
      ? `(CASE WHEN ${field} ~ ${SQL_NUMBER_RE} THEN CAST(${field} AS numeric) ${op} CAST(:${val} AS numeric) ELSE ${text} END)`
      : text;
    (f.condition === 'or' ? or : and).push(`COALESCE(${cmp}, ${negative ? 'true' : 'false'})`);
  });
  const parts = [...and];
  if (or.length) parts.push(`(${or.join(' OR ')})`);
  return { sql: parts.length ? parts.join(' AND ') : 'true', params };
}
