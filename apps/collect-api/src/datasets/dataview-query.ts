import { isNumberAnswer, safeNumericSql } from '../submissions/number-answer.js';
import type { DataviewFilter } from './dataset.entities.js';

export const DATAVIEW_OPERATORS = ['=', '>', '<', '>=', '<=', '<>', '!='] as const;
/** A column of a dataview: a field name or xpath (`group/q`). */
export const DATAVIEW_COLUMN = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/;

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
    // Both sides through the bounded cast (docs/security.md, "Numbers, formulas and names"): an
    // answer or a filter value such as 1e999999 compares as text, never fails the statement.
    const numericValue = typeof f.value === 'number' ? Number.isFinite(f.value) : isNumberAnswer(f.value);
    const number = safeNumericSql(field);
    const cmp = numericValue
      ? `(CASE WHEN ${number} IS NOT NULL THEN ${number} ${op} CAST(:${val} AS numeric) ELSE ${text} END)`
      : text;
    (f.condition === 'or' ? or : and).push(`COALESCE(${cmp}, ${negative ? 'true' : 'false'})`);
  });
  const parts = [...and];
  if (or.length) parts.push(`(${or.join(' OR ')})`);
  return { sql: parts.length ? parts.join(' AND ') : 'true', params };
}
