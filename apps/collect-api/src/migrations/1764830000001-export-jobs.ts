import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Asynchronous exports (docs/exports.md, "Asynchronous exports"). */
export class ExportJobs1764830000001 implements MigrationInterface {
  name = 'ExportJobs1764830000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE export_jobs (
      id uuid PRIMARY KEY,
      owner_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
      format varchar(10) NOT NULL,
      options jsonb NOT NULL DEFAULT '{}',
      status varchar(10) NOT NULL DEFAULT 'pending',
      progress real NOT NULL DEFAULT 0,
      path varchar(500),
      error text,
      date_created timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX export_jobs_expires_idx ON export_jobs (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS export_jobs`);
  }
}
