import type { DataSource } from 'typeorm';

/** Rows fetched per round trip when a read is streamed through a cursor. */
export const CURSOR_BATCH = 500;

/**
 * Rows of `sql` in batches through a server-side cursor in a read-only transaction on its own
 * connection: PostgreSQL holds the result, Node holds one batch (exports and media archives
 * stay flat in memory whatever their size). The connection is released when the consumer stops
 * early too (generator `return`). For repositories only.
 */
export async function* cursorRows<T>(db: DataSource, sql: string, params: unknown[], batch = CURSOR_BATCH): AsyncGenerator<T[]> {
  const runner = db.createQueryRunner();
  await runner.connect();
  let open = false;
  try {
    await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    open = true;
    await runner.query(`DECLARE data_out NO SCROLL CURSOR FOR ${sql}`, params);
    for (;;) {
      const rows = (await runner.query(`FETCH ${batch} FROM data_out`)) as T[];
      if (rows.length) yield rows;
      if (rows.length < batch) break;
    }
  } finally {
    if (open) await runner.query('ROLLBACK').catch(() => undefined);
    await runner.release();
  }
}
