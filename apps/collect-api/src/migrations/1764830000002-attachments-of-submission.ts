import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A data page reads each submission's live attachments in id order
 * (`json_agg(... ORDER BY a.id)`, submission-data.repository.ts). With only
 * attachments_submission_idx (submission_id) and attachments_live_id_idx (id, live), PostgreSQL
 * chose the second for its order and filtered every live attachment per submission: 300 ms per
 * page of 100 once a few thousand attachments existed (docs/data-api.md, "How it runs"). This
 * index gives both the condition and the order.
 */
export class AttachmentsOfSubmission1764830000002 implements MigrationInterface {
  name = 'AttachmentsOfSubmission1764830000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS attachments_submission_live_idx ON attachments (submission_id, id) WHERE deleted_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS attachments_submission_live_idx`);
  }
}
