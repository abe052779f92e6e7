import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trigger functions as this migration writes them (migration 1764910000001 replaces three
 * and restores these in its `down`).
 */
export const COUNT_FUNCTIONS = [
  `CREATE OR REPLACE FUNCTION submission_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta) SELECT form_id, count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY form_id;
        RETURN NULL;
      END $$`,
  `CREATE OR REPLACE FUNCTION submission_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta)
          SELECT form_id, sum(d) FROM (
            SELECT form_id, 1 AS d FROM new_rows WHERE deleted_at IS NULL
            UNION ALL SELECT form_id, -1 FROM old_rows WHERE deleted_at IS NULL
          ) x GROUP BY form_id HAVING sum(d) <> 0;
        RETURN NULL;
      END $$`,
  `CREATE OR REPLACE FUNCTION submission_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta) SELECT form_id, -count(*) FROM old_rows WHERE deleted_at IS NULL GROUP BY form_id;
        RETURN NULL;
      END $$`,
  `CREATE OR REPLACE FUNCTION submission_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM submission_count_deltas;
        RETURN NULL;
      END $$`,
];

/**
 * Live submissions per form, kept by the database for `X-Total-Count` (docs/data-api.md, "How
 * it runs"): statement-level triggers on `submissions` add one delta row per form a statement
 * changes, and a reader sums a form's rows. Deltas, not one counter row per form: a counter
 * row was a lock every intake of the form queued on (migration 1764000000001). The readers fold
 * a form's rows into one now and then (SubmissionDataRepository.foldCounts); a fold deletes
 * and re-inserts in one statement, so every snapshot sees the same sum.
 *
 * Transition tables hold only the rows a statement changed; an UPDATE that keeps every row's
 * form and liveness writes nothing. TRUNCATE of `submissions` empties the table (every count 0).
 */
export class SubmissionCounts1764910000000 implements MigrationInterface {
  name = 'SubmissionCounts1764910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE submission_count_deltas (form_id int NOT NULL, delta int NOT NULL)`);
    await q.query(`CREATE INDEX submission_count_deltas_form_idx ON submission_count_deltas (form_id)`);
    for (const sql of COUNT_FUNCTIONS) await q.query(sql);
    // No writes between the baseline and the triggers.
    await q.query(`LOCK TABLE submissions IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`CREATE TRIGGER submissions_count_insert AFTER INSERT ON submissions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION submission_count_inserted()`);
    await q.query(`CREATE TRIGGER submissions_count_update AFTER UPDATE ON submissions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION submission_count_updated()`);
    await q.query(`CREATE TRIGGER submissions_count_delete AFTER DELETE ON submissions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION submission_count_deleted()`);
    await q.query(`CREATE TRIGGER submissions_count_truncate AFTER TRUNCATE ON submissions FOR EACH STATEMENT EXECUTE FUNCTION submission_count_truncated()`);
    await q.query(`INSERT INTO submission_count_deltas (form_id, delta) SELECT form_id, count(*) FROM submissions WHERE deleted_at IS NULL GROUP BY form_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS submissions_count_truncate ON submissions`);
    await q.query(`DROP TRIGGER IF EXISTS submissions_count_delete ON submissions`);
    await q.query(`DROP TRIGGER IF EXISTS submissions_count_update ON submissions`);
    await q.query(`DROP TRIGGER IF EXISTS submissions_count_insert ON submissions`);
    await q.query(`DROP FUNCTION IF EXISTS submission_count_truncated()`);
    await q.query(`DROP FUNCTION IF EXISTS submission_count_deleted()`);
    await q.query(`DROP FUNCTION IF EXISTS submission_count_updated()`);
    await q.query(`DROP FUNCTION IF EXISTS submission_count_inserted()`);
    await q.query(`DROP TABLE IF EXISTS submission_count_deltas`);
  }
}
