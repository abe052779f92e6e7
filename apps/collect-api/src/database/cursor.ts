import type { DataSource } from 'typeorm';

/** Rows fetched per round trip when a read is streamed through a cursor. */
export const CURSOR_BATCH = 500;

/** A statement run on the cursor's own connection, in its transaction. */
export type CursorQuery = (sql: string, params: unknown[]) => Promise<unknown[]>;

/**
 * Rows of `sql` in batches through a server-side cursor in a read-only transaction on its own
 * connection: PostgreSQL holds the result, Node holds one batch (exports and media archives
 * stay flat in memory whatever their size). The connection is released when the consumer stops
 * early too (generator `return`). For repositories only.
 *
 * `before` runs in the same transaction before the cursor opens (a count of the same rows, in
 * the same snapshot). Whatever else a reader needs while it holds the cursor must come from
 * there, never from the pool: a holder asking the pool for a second connection deadlocks once
 * every pooled connection is held by such a holder (docs/architecture.md, "Database connections").
 */
export async function* cursorRows<T>(db: DataSource, sql: string, params: unknown[], opts: { before?: (query: CursorQuery) => Promise<void> } = {}): AsyncGenerator<T[]> {
  const runner = db.createQueryRunner();
  await runner.connect();
  let open = false;
  try {
    await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    open = true;
    if (opts.before) await opts.before((text, values) => runner.query(text, values) as Promise<unknown[]>);
    await runner.query(`DECLARE data_out NO SCROLL CURSOR FOR ${sql}`, params);
    for (;;) {
      const rows = (await runner.query(`FETCH ${CURSOR_BATCH} FROM data_out`)) as T[];
      if (rows.length) yield rows;
      if (rows.length < CURSOR_BATCH) break;
    }
  } finally {
    if (open) await runner.query('ROLLBACK').catch(() => undefined);
    await runner.release();
  }
}
