import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `rest_deliveries.service_id` loses its foreign key; a trigger keeps what its ON DELETE CASCADE
 * did (deleting a service deletes its deliveries, and their attempts by their own cascade).
 * The key's check ran on every outbox row the intake writes: a `SELECT … FOR KEY SHARE` of the
 * service's row, the one row every concurrent submission of the form locks and the worker's
 * attempt write updates (its health), so concurrent intakes made MultiXacts of it: 85 to 92 µs
 * of PostgreSQL CPU per inserted row with the key, 55 to 64 without, 10 concurrent inserters
 * (docs/restservices.md, "Connections and batches (the worker's hot path)"). Nothing depends on the check:
 * the outbox statement reads the service's row in the same statement, and a row whose service
 * was deleted meanwhile is finished `skipped` by the worker (the claim returns no service), as
 * before for a service deleted between the outbox write and the send.
 */
export class DeliveriesWithoutServiceFk1764920000100 implements MigrationInterface {
  name = 'DeliveriesWithoutServiceFk1764920000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_deliveries DROP CONSTRAINT rest_deliveries_service_id_fkey`);
    await q.query(`
      CREATE FUNCTION rest_service_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM rest_deliveries WHERE service_id = OLD.id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER rest_service_deleted AFTER DELETE ON rest_services FOR EACH ROW EXECUTE FUNCTION rest_service_deleted()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS rest_service_deleted ON rest_services`);
    await q.query(`DROP FUNCTION IF EXISTS rest_service_deleted()`);
    await q.query(`DELETE FROM rest_deliveries d WHERE NOT EXISTS (SELECT 1 FROM rest_services s WHERE s.id = d.service_id)`);
    await q.query(`ALTER TABLE rest_deliveries ADD CONSTRAINT rest_deliveries_service_id_fkey FOREIGN KEY (service_id) REFERENCES rest_services(id) ON DELETE CASCADE`);
  }
}
