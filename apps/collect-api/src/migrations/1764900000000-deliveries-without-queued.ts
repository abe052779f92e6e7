import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The worker claims due outbox rows straight from PostgreSQL (pending → sending), with no
 * Bull job in between, so the `queued` state is gone (docs/restservices.md, "Delivery model").
 * A row left `queued` by the previous worker goes back to `pending`, due now: the same thing
 * its lease running out did before. A `sending` row's `next_attempt_at` now carries the end
 * of its lease (restservices.repository.ts, LEASE). `down` has nothing to restore: the old
 * relay claims `pending` rows and reads `lease_until`, which is still written.
 */
export class DeliveriesWithoutQueued1764900000000 implements MigrationInterface {
  name = 'DeliveriesWithoutQueued1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE rest_deliveries SET status = 'pending', lease_until = NULL, next_attempt_at = LEAST(next_attempt_at, now()) WHERE status = 'queued'`);
    await q.query(`UPDATE rest_deliveries SET next_attempt_at = COALESCE(lease_until, now()) WHERE status = 'sending'`);
  }

  async down(): Promise<void> {}
}
