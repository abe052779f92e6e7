import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Equality queries of the data API (`?query={"district": "north"}`) are JSON containment
 * (`json @> '{"district": "north"}'`), which this GIN index answers (docs/data-api.md,
 * "Indexes"). `jsonb_path_ops` indexes the key/value paths only: smaller and faster to update
 * than the default operator class, and containment is the one operator the API uses on it.
 */
export class SubmissionJsonIndex1764830000000 implements MigrationInterface {
  name = 'SubmissionJsonIndex1764830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS submissions_json_path_idx ON submissions USING gin (json jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS submissions_json_path_idx`);
  }
}
