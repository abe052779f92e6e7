import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQL: the snapshot of the submissions row `row` as the outbox statement stores it for the
 * service `r` (delivery-snapshot.ts, snapshotOfRowSql and snapshotForServiceSql, written out
 * here: a migration keeps the SQL of its day). An expression of the UPDATE's SET: built only for
 * the rows the UPDATE finds.
 */
const snapshotOf = (row: string) => {
  const snap = `jsonb_build_object(
    'submission', to_jsonb(${row}),
    'attachments', COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM attachments a WHERE a.submission_id = ${row}.id AND a.deleted_at IS NULL), '[]'::jsonb),
    'submitted_by', (SELECT u.username FROM users u WHERE u.id = ${row}.submitted_by_id),
    'missing_media', '[]'::jsonb)`;
  return `CASE WHEN r.name IN ('generic_xml') THEN ${snap} ELSE ${snap} #- '{submission,xml}' END`;
};

/** The open rows `d` of a non-delete event with neither a snapshot nor kept bytes, with their service `r`. */
const WITHOUT_SNAPSHOT = `d.status IN ('pending', 'retrying', 'sending') AND d.snapshot IS NULL AND d.body IS NULL AND d.event <> 'deleted' AND r.id = d.service_id`;

/**
 * The `created` rows the one-statement intake writes no longer carry a snapshot of the new
 * submission: until the submission changes, the live row is that snapshot, and the claim builds
 * it from the live row (restservices.repository.ts, CLAIMED). This trigger keeps the promise of
 * docs/restservices.md, "Fidelity": the first time a submission row is updated while an
 * unsent, not-yet-attempted-with-kept-bytes row of it has no snapshot (an edit, a review, a
 * soft delete, before the relay reached the row), the row gets the snapshot of the submission
 * as it was before the update (`OLD`), built as the outbox statement builds it
 * (delivery-snapshot.ts, snapshotOfRowSql and snapshotForServiceSql; the XML only for
 * `generic_xml`). Every later update finds the snapshot there and leaves it. A row whose first
 * attempt failed already keeps its request bytes (`body`) and needs none.
 *
 * Why: the snapshot was written three times per forwarded submission (outbox insert, claim,
 * attempt end; the two updates copy the whole row), about 1 kB of WAL of a small submission's
 * 2.9 kB, most of a 250-answer one's outbox row, and nearly every submission is sent before
 * anything changes it (docs/restservices.md, "Fidelity").
 *
 * Per row: a submissions UPDATE without such rows costs one probe of the open rows' index by
 * submission.
 */
export class DeliverySnapshotOnChange1764950000000 implements MigrationInterface {
  name = 'DeliverySnapshotOnChange1764950000000';

  async up(q: QueryRunner): Promise<void> {
    // One statement: without such rows it is one probe of the open rows' index by submission.
    await q.query(`
      CREATE FUNCTION rest_deliveries_keep_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE rest_deliveries d SET snapshot = ${snapshotOf('OLD')}
        FROM rest_services r WHERE d.submission_id = OLD.id AND ${WITHOUT_SNAPSHOT};
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER submissions_keep_delivery_snapshots AFTER UPDATE ON submissions FOR EACH ROW EXECUTE FUNCTION rest_deliveries_keep_snapshot()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS submissions_keep_delivery_snapshots ON submissions`);
    await q.query(`DROP FUNCTION IF EXISTS rest_deliveries_keep_snapshot()`);
    // The rows still without one get the snapshot the older code expects (built from the live row).
    await q.query(`UPDATE rest_deliveries d SET snapshot = ${snapshotOf('s')} FROM rest_services r, submissions s WHERE s.id = d.submission_id AND ${WITHOUT_SNAPSHOT}`);
  }
}
