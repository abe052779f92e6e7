import type { MigrationInterface, QueryRunner } from 'typeorm';
import { COUNT_FUNCTIONS } from './1764910000000-submission-counts.js';

/**
 * The kept-count delta rows (migration 1764910000000) become the record of every change a data
 * page shows, for the page cache (submissions/data-page-cache.ts; docs/data-api.md, "How it
 * runs"): each row carries the id of the transaction that wrote it (`xid`), and a transaction
 * that changes what a form's page shows writes at least one row for that form: any update of
 * its submissions (delta 0 when the count stays), any write to its attachments, an update of
 * the form; a changed username or a TRUNCATE writes a row for form 0, which every page reads.
 * A page built in snapshot S is still what the database shows when no row of its form (or of
 * form 0) is invisible to S: a fold that deleted rows wrote one of its own, so that holds too.
 */
export class DataChanges1764910000001 implements MigrationInterface {
  name = 'DataChanges1764910000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE submission_count_deltas ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id()`);
    await q.query(`DROP INDEX submission_count_deltas_form_idx`);
    await q.query(`CREATE INDEX submission_count_deltas_form_xid_idx ON submission_count_deltas (form_id, xid)`);
    // Every form an update touches gets a row, also when its count stays (an edit, a bamboo id).
    await q.query(`
      CREATE OR REPLACE FUNCTION submission_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta)
          SELECT form_id, sum(d) FROM (
            SELECT form_id, CASE WHEN deleted_at IS NULL THEN 1 ELSE 0 END AS d FROM new_rows
            UNION ALL SELECT form_id, CASE WHEN deleted_at IS NULL THEN -1 ELSE 0 END FROM old_rows
          ) x GROUP BY form_id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION submission_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta) SELECT form_id, -count(*) FILTER (WHERE deleted_at IS NULL) FROM old_rows GROUP BY form_id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION submission_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM submission_count_deltas;
        INSERT INTO submission_count_deltas (form_id, delta) VALUES (0, 0);
        RETURN NULL;
      END $$`);
    // A row for each form of the statement's attachments unless this transaction wrote one for
    // it already (a new submission with its files: the submission's insert did).
    for (const [op, table] of [['inserted', 'new_rows'], ['updated', 'new_rows'], ['deleted', 'old_rows']] as const) {
      await q.query(`
        CREATE FUNCTION attachment_${op}_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO submission_count_deltas (form_id, delta)
            SELECT DISTINCT r.form_id, 0 FROM ${table} r
            WHERE NOT EXISTS (SELECT 1 FROM submission_count_deltas k WHERE k.form_id = r.form_id AND k.xid = pg_current_xact_id());
          RETURN NULL;
        END $$`);
    }
    await q.query(`CREATE TRIGGER attachments_change_insert AFTER INSERT ON attachments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION attachment_inserted_change()`);
    await q.query(`CREATE TRIGGER attachments_change_update AFTER UPDATE ON attachments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION attachment_updated_change()`);
    await q.query(`CREATE TRIGGER attachments_change_delete AFTER DELETE ON attachments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION attachment_deleted_change()`);
    await q.query(`
      CREATE FUNCTION data_form_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta) VALUES (NEW.id, 0);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER forms_data_change AFTER UPDATE ON forms FOR EACH ROW EXECUTE FUNCTION data_form_changed()`);
    await q.query(`
      CREATE FUNCTION data_username_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO submission_count_deltas (form_id, delta) VALUES (0, 0);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER users_data_change AFTER UPDATE OF username ON users FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username) EXECUTE FUNCTION data_username_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS users_data_change ON users`);
    await q.query(`DROP FUNCTION IF EXISTS data_username_changed()`);
    await q.query(`DROP TRIGGER IF EXISTS forms_data_change ON forms`);
    await q.query(`DROP FUNCTION IF EXISTS data_form_changed()`);
    for (const op of ['insert', 'update', 'delete']) await q.query(`DROP TRIGGER IF EXISTS attachments_change_${op} ON attachments`);
    for (const op of ['inserted', 'updated', 'deleted']) await q.query(`DROP FUNCTION IF EXISTS attachment_${op}_change()`);
    for (const sql of COUNT_FUNCTIONS) await q.query(sql);
    await q.query(`DROP INDEX IF EXISTS submission_count_deltas_form_xid_idx`);
    await q.query(`CREATE INDEX submission_count_deltas_form_idx ON submission_count_deltas (form_id)`);
    await q.query(`ALTER TABLE submission_count_deltas DROP COLUMN xid`);
  }
}
