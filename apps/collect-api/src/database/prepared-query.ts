import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';

/**
 * Statement texts this process prepares, and the name each gets. The texts are fixed strings of
 * the hot paths (never built from user input), so the map stays as small as the code is: a
 * guard refuses more than MAX_STATEMENTS all the same, since every pooled connection keeps a
 * prepared statement for each name it has run.
 */
const names = new Map<string, string>();
const MAX_STATEMENTS = 64;

function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_STATEMENTS) throw new Error(`preparedQuery: more than ${MAX_STATEMENTS} distinct statements; it is for the fixed statements of hot paths`);
    name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * Runs a fixed statement of a hot path as a named prepared statement on TypeORM's own pg pool:
 * PostgreSQL parses it once per connection and, after its first executions, may keep a generic
 * plan, where an unnamed statement is parsed and planned on every call (for the intake's
 * checked insert that planning was most of the statement's CPU; docs/benchmarks.md,
 * "cpu-per-request"). Also skips TypeORM's query runner, which a single statement outside a transaction
 * does not need. Errors come back as TypeORM's QueryFailedError, as from `DataSource.query`.
 * For repositories only; never for a text built from input (see MAX_STATEMENTS).
 */
export function preparedQuery<T>(db: DataSource, text: string, values: unknown[]): Promise<T[]> {
  return run((db.driver as unknown as { master: Pool }).master, text, values);
}

/**
 * `preparedQuery` on a pool of the repository's own (one whose connections carry settings of
 * their own, e.g. the worker's claim connection: restservices/delivery/delivery-statements.ts, CLAIM_PLANNER).
 */
export function preparedQueryOnPool<T>(pool: Pool, text: string, values: unknown[]): Promise<T[]> {
  return run(pool, text, values);
}

/**
 * `preparedQuery` inside the transaction of `m` (on its connection): for the fixed statements
 * of a hot path's transaction (the OpenRosa intake's checked insert and attachment rows).
 */
export async function preparedQueryIn<T>(m: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  if (!m.queryRunner) return preparedQuery(m.connection, text, values);
  return run((await m.queryRunner.connect()) as PoolClient, text, values);
}

async function run<T>(on: Pool | PoolClient, text: string, values: unknown[]): Promise<T[]> {
  try {
    const result = await on.query({ name: nameOf(text), text, values });
    return result.rows as T[];
  } catch (err) {
    if (err instanceof Error && 'severity' in err) throw new QueryFailedError(text, values, err);
    throw err;
  }
}
