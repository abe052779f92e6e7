import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The size of an export's written file, and an index of each owner's exports: the per-user
 * quotas read both when an export is asked for (docs/exports.md, "Quotas").
 */
export class ExportJobSize1765100000001 implements MigrationInterface {
  name = 'ExportJobSize1765100000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE export_jobs ADD COLUMN IF NOT EXISTS size bigint`);
    await q.query(`CREATE INDEX IF NOT EXISTS export_jobs_owner ON export_jobs (owner_id, expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS export_jobs_owner`);
    await q.query(`ALTER TABLE export_jobs DROP COLUMN IF EXISTS size`);
  }
}
