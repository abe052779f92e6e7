import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rest services, shaping and destination care (docs/restservices.md): the `fields` subset, the
 * write-only extra headers and Basic credentials (SecretBox-encrypted; the header names kept
 * apart so responses can list them without decrypting), the per-service rate limit, and
 * `active_since`, from which auto-disable counts failures after a re-enable. The attempts
 * indexes serve the 24 h health figures, the auto-disable sweep and re-enable.
 */
export class RestServiceCare1764700000100 implements MigrationInterface {
  name = 'RestServiceCare1764700000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE rest_services
        ADD COLUMN fields jsonb,
        ADD COLUMN headers_enc text,
        ADD COLUMN header_names jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN basic_auth_enc text,
        ADD COLUMN rate_limit_per_minute int CHECK (rate_limit_per_minute BETWEEN 1 AND 100000),
        ADD COLUMN active_since timestamptz NOT NULL DEFAULT now()`);
    await q.query(`CREATE INDEX rest_delivery_attempts_service_time_idx ON rest_delivery_attempts (service_id, created_at) INCLUDE (status, latency_ms)`);
    // The last attempt of a delivery (re-enable picks what failed during an outage; the cascade from rest_deliveries).
    await q.query(`CREATE INDEX IF NOT EXISTS rest_delivery_attempts_row_idx ON rest_delivery_attempts (delivery_row_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rest_delivery_attempts_row_idx`);
    await q.query(`DROP INDEX IF EXISTS rest_delivery_attempts_service_time_idx`);
    await q.query(`ALTER TABLE rest_services DROP COLUMN fields, DROP COLUMN headers_enc, DROP COLUMN header_names, DROP COLUMN basic_auth_enc, DROP COLUMN rate_limit_per_minute, DROP COLUMN active_since`);
  }
}
