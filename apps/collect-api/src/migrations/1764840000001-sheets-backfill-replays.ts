import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The spreadsheet back-fill became a replay (docs/restservices.md, "Spreadsheet back-fill"):
 * a back-fill still under way (`options.backfill_pending`) continues as a replay of the
 * submissions its sheet has no row for, from the cursor it had reached, which the worker's
 * ReplayResumer picks up; the old option keys go. `down` cannot turn replays back into cursors:
 * it only drops the link to them.
 */
export class SheetsBackfillReplays1764840000001 implements MigrationInterface {
  name = 'SheetsBackfillReplays1764840000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      WITH pending AS (
        SELECT s.id, s.form_id, COALESCE((s.options->>'backfill_cursor')::int, 0) AS cursor
        FROM rest_services s
        WHERE s.name = 'spreadsheet' AND s.options->>'backfill_pending' = 'true' AND s.options ? 'spreadsheet_id'),
      made AS (
        INSERT INTO rest_replays (service_id, status, filters, total, upto, cursor)
        SELECT p.id, 'queued', '{"missing_in_sheet": true}'::jsonb,
               (SELECT count(*)::int FROM submissions x WHERE x.form_id = p.form_id AND x.deleted_at IS NULL AND x.id > p.cursor
                  AND NOT EXISTS (SELECT 1 FROM sheets_rows r WHERE r.service_id = p.id AND r.submission_id = x.id)),
               (SELECT COALESCE(max(x.id), 0) FROM submissions x WHERE x.form_id = p.form_id), p.cursor
        FROM pending p
        RETURNING id, service_id)
      UPDATE rest_services s SET options = s.options || jsonb_build_object('backfill_replay', made.id)
      FROM made WHERE s.id = made.service_id`);
    await q.query(`UPDATE rest_services SET options = options - 'backfill_pending' - 'backfill_cursor' WHERE name = 'spreadsheet' AND (options ? 'backfill_pending' OR options ? 'backfill_cursor')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE rest_services SET options = options - 'backfill_replay' WHERE name = 'spreadsheet'`);
  }
}
