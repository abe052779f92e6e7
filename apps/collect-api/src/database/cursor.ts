import type { ReadLease } from './read-pool.js';

/** Rows fetched per round trip when a read is streamed through a cursor. */
export const CURSOR_BATCH = 500;

/** A statement run on the cursor's own connection, in its transaction. */
export type CursorQuery = (sql: string, params: unknown[]) => Promise<unknown[]>;

/**
 * Rows of `sql` in batches through a server-side cursor in a read-only transaction on a
 * connection of the read pool (database/read-pool.ts), taken through the caller's lease:
 * PostgreSQL holds the result, Node holds one batch (exports and large pages stay flat in
 * memory whatever their size). The connection is released when the consumer stops early too
 * (generator `return`), and is closed rather than reused when the read failed or its client
 * left (PostgreSQL may have ended the session: `idle_in_transaction_session_timeout`). For
 * repositories only.
 *
 * `before` runs in the same transaction before the cursor opens (a count of the same rows, in
 * the same snapshot). Whatever else a reader needs while it holds the cursor must come from
 * there, never from a pool: a holder asking for a second connection deadlocks once every
 * connection is held by such a holder (docs/architecture.md, "Database connections").
 */
export async function* cursorRows<T>(lease: ReadLease, sql: string, params: unknown[], opts: { before?: (query: CursorQuery) => Promise<void> } = {}): AsyncGenerator<T[]> {
  const client = await lease.connect();
  let open = false;
  let broken = false;
  try {
    await lease.run(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    open = true;
    if (opts.before) await opts.before((text, values) => lease.run(client, text, values));
    await lease.run(client, `DECLARE data_out NO SCROLL CURSOR FOR ${sql}`, params);
    for (;;) {
      const rows = (await lease.run(client, `FETCH ${CURSOR_BATCH} FROM data_out`)) as T[];
      if (rows.length) yield rows;
      if (rows.length < CURSOR_BATCH) break;
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    if (open && !broken) broken = await client.query('ROLLBACK').then(() => false, () => true);
    lease.done(client, broken);
  }
}
