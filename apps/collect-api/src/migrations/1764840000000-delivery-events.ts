import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery model of docs/restservices.md ("Events", "Fidelity", "Ordering"):
 * - `rest_services.events`: which submission events a service takes. Existing services get the
 *   defaults of their kind (messaging and health_forwarder: created; spreadsheet: created, plus
 *   updated and deleted with sync_updates, as before; the others: created and updated).
 * - `rest_deliveries.snapshot`: the submission as it was when the event was recorded, so every
 *   attempt sends what the event was about; `body`: the bytes of the first attempt, kept when a
 *   retry follows so a retry never rebuilds them. Both null on rows written before.
 * - an index over the open rows by (submission, service, id): the relay's "no earlier open row
 *   of this submission for this service" test and the media-wait refresh.
 */
export class DeliveryEvents1764840000000 implements MigrationInterface {
  name = 'DeliveryEvents1764840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_services ADD COLUMN events text[]`);
    await q.query(`
      UPDATE rest_services SET events = CASE
        WHEN name IN ('messaging', 'health_forwarder') THEN '{created}'::text[]
        WHEN name = 'spreadsheet' THEN CASE WHEN COALESCE((options->>'sync_updates')::boolean, true) THEN '{created,updated,deleted}'::text[] ELSE '{created}'::text[] END
        ELSE '{created,updated}'::text[] END`);
    await q.query(`ALTER TABLE rest_services ALTER COLUMN events SET NOT NULL, ALTER COLUMN events SET DEFAULT '{created}'`);
    await q.query(`ALTER TABLE rest_deliveries ADD COLUMN snapshot jsonb, ADD COLUMN body bytea`);
    await q.query(`CREATE INDEX rest_deliveries_open_order_idx ON rest_deliveries (submission_id, service_id, id) WHERE status IN ('pending', 'retrying', 'queued', 'sending')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rest_deliveries_open_order_idx`);
    await q.query(`ALTER TABLE rest_deliveries DROP COLUMN snapshot, DROP COLUMN body`);
    await q.query(`ALTER TABLE rest_services DROP COLUMN events`);
  }
}
