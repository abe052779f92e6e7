import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The worker's claim of a delivery row changes only `attempts` and `lease_until`, columns no
 * index of rest_deliveries names, so PostgreSQL can update the row in place (a heap-only tuple:
 * no entry in the table's six indexes, a short WAL record) when its page has room: new pages
 * keep a fifth free (fillfactor 80; the row's next version, the attempt write, is not HOT and
 * takes its room back). A row being sent is now `pending`/`retrying` with a lease
 * (restservices.repository.ts, LEASE; docs/restservices.md,
 * "Connections and batches (the worker's hot path)"). Rows left `sending` by the previous worker keep their lease and the
 * status their attempts give them, as `release` sets it; their `next_attempt_at` (the lease's
 * end) makes them due when the lease passes, as before.
 */
export class DeliveriesClaimInPlace1764940000000 implements MigrationInterface {
  name = 'DeliveriesClaimInPlace1764940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_deliveries SET (fillfactor = 80)`);
    await q.query(`UPDATE rest_deliveries SET status = CASE WHEN attempts - 1 > attempt_base THEN 'retrying' ELSE 'pending' END,
                     lease_until = COALESCE(lease_until, next_attempt_at) WHERE status = 'sending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE rest_deliveries SET status = 'sending', next_attempt_at = lease_until WHERE lease_until IS NOT NULL AND status IN ('pending', 'retrying')`);
    await q.query(`ALTER TABLE rest_deliveries RESET (fillfactor)`);
  }
}
