import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rest-service deliveries of entity events (docs/entities.md, "Entity events to rest services"):
 * a row is about a submission (`submission_id`) or about an entity (`entity_id`, with
 * `submission_id` null), never both; no foreign key, as for the other columns of the outbox
 * (migration 1764920000100): the row's snapshot holds what it sends. An index over the open rows
 * by (entity, service, id) serves the relay's "no earlier open row of this entity for this
 * service" test, as rest_deliveries_open_order_idx does for submissions.
 */
export class EntityDeliveries1765200300000 implements MigrationInterface {
  name = 'EntityDeliveries1765200300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_deliveries ADD COLUMN entity_id bigint, ALTER COLUMN submission_id DROP NOT NULL`);
    await q.query(`ALTER TABLE rest_deliveries ADD CONSTRAINT rest_deliveries_subject CHECK ((submission_id IS NULL) <> (entity_id IS NULL)) NOT VALID`);
    await q.query(`CREATE INDEX rest_deliveries_open_entity_idx ON rest_deliveries (entity_id, service_id, id) WHERE entity_id IS NOT NULL AND status IN ('pending', 'retrying', 'sending')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM rest_deliveries WHERE entity_id IS NOT NULL`);
    await q.query(`DROP INDEX IF EXISTS rest_deliveries_open_entity_idx`);
    await q.query(`ALTER TABLE rest_deliveries DROP CONSTRAINT IF EXISTS rest_deliveries_subject, DROP COLUMN entity_id, ALTER COLUMN submission_id SET NOT NULL`);
  }
}
