import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery-log retention (docs/restservices.md): the worker deletes finished deliveries (and,
 * by cascade, their attempts) older than FORWARD_LOG_RETENTION_DAYS. This partial index lets it
 * find them oldest first without scanning open rows or the whole table.
 */
export class DeliveryLogRetention1764500000000 implements MigrationInterface {
  name = 'DeliveryLogRetention1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX rest_deliveries_finished_idx ON rest_deliveries (date_modified) WHERE status IN ('success', 'failed', 'skipped')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rest_deliveries_finished_idx`);
  }
}
