import type { MigrationInterface, QueryRunner } from 'typeorm';

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
 * anything changes it (docs/benchmarks.md, "Forwarding: snapshot on change (issue 20, session 15)").
 *
 * Per row, with a cheap test first: a submissions UPDATE without open rows costs one probe of
 * the open rows' index by submission.
 */
export class DeliverySnapshotOnChange1764950000000 implements MigrationInterface {
  name = 'DeliverySnapshotOnChange1764950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION rest_deliveries_keep_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        snap jsonb;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM rest_deliveries d WHERE d.submission_id = OLD.id AND d.status IN ('pending', 'retrying', 'sending')
                         AND d.snapshot IS NULL AND d.body IS NULL AND d.event <> 'deleted') THEN
          RETURN NULL;
        END IF;
        snap := jsonb_build_object(
          'submission', to_jsonb(OLD),
          'attachments', COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM attachments a WHERE a.submission_id = OLD.id AND a.deleted_at IS NULL), '[]'::jsonb),
          'submitted_by', (SELECT u.username FROM users u WHERE u.id = OLD.submitted_by_id),
          'missing_media', '[]'::jsonb);
        UPDATE rest_deliveries d SET snapshot = CASE WHEN r.name IN ('generic_xml') THEN snap ELSE snap #- '{submission,xml}' END
        FROM rest_services r
        WHERE d.submission_id = OLD.id AND d.status IN ('pending', 'retrying', 'sending')
          AND d.snapshot IS NULL AND d.body IS NULL AND d.event <> 'deleted' AND r.id = d.service_id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER submissions_keep_delivery_snapshots AFTER UPDATE ON submissions FOR EACH ROW EXECUTE FUNCTION rest_deliveries_keep_snapshot()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS submissions_keep_delivery_snapshots ON submissions`);
    await q.query(`DROP FUNCTION IF EXISTS rest_deliveries_keep_snapshot()`);
    // The rows still without one get the snapshot the older code expects (built from the live row).
    await q.query(`
      UPDATE rest_deliveries d SET snapshot = CASE WHEN r.name IN ('generic_xml') THEN x.snap ELSE x.snap #- '{submission,xml}' END
      FROM rest_services r, submissions s,
        LATERAL (SELECT jsonb_build_object(
          'submission', to_jsonb(s),
          'attachments', COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM attachments a WHERE a.submission_id = s.id AND a.deleted_at IS NULL), '[]'::jsonb),
          'submitted_by', (SELECT u.username FROM users u WHERE u.id = s.submitted_by_id),
          'missing_media', '[]'::jsonb) AS snap) x
      WHERE d.snapshot IS NULL AND d.body IS NULL AND d.event <> 'deleted' AND d.status IN ('pending', 'retrying', 'sending')
        AND r.id = d.service_id AND s.id = d.submission_id`);
  }
}
