import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Encrypted submissions as received (docs/encryption.md "How an envelope is stored"): one row per
 * submission whose instance was an encrypted envelope, beside its `submissions` row. The manifest
 * as received, the part names in ciphering order (media in manifest order, the XML part last), the
 * key of the form version it was made with, and where its decryption stands. The parts themselves
 * are the submission's attachments under their `.enc` names.
 */
export class SubmissionEnvelopes1765200000000 implements MigrationInterface {
  name = 'SubmissionEnvelopes1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE submission_envelopes (
        submission_id int PRIMARY KEY REFERENCES submissions(id) ON DELETE CASCADE,
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        version varchar(100),
        instance_id varchar(255) NOT NULL,
        key_id varchar(64),
        manifest text NOT NULL,
        parts text[] NOT NULL,
        decryption varchar(16) NOT NULL DEFAULT 'pending' CHECK (decryption IN ('pending', 'decrypted', 'failed')),
        decryption_error jsonb,
        decrypted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((decryption = 'failed') = (decryption_error IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX submission_envelopes_form_idx ON submission_envelopes (form_id, submission_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS submission_envelopes`);
  }
}
