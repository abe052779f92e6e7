import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Routing a submission by id_string when several forms share it (docs/forms.md, "Which form a
 * submission goes to"): `form_roles.granted_at` (existing rows: the form's creation, the
 * earliest they can have been granted), and an index to find the form a user last submitted to.
 */
export class SubmissionRouting1764600000001 implements MigrationInterface {
  name = 'SubmissionRouting1764600000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE form_roles ADD COLUMN granted_at timestamptz NOT NULL DEFAULT now()`);
    await q.query(`UPDATE form_roles r SET granted_at = f.date_created FROM forms f WHERE f.id = r.form_id`);
    await q.query(`CREATE INDEX submissions_submitter_form_idx ON submissions (submitted_by_id, form_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS submissions_submitter_form_idx`);
    await q.query(`ALTER TABLE form_roles DROP COLUMN IF EXISTS granted_at`);
  }
}
