import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `rest_delivery_attempts.delivery_row_id` loses its foreign key; a statement trigger keeps what
 * its ON DELETE CASCADE did (deleting deliveries, by pruning or with their service, deletes their
 * log entries). The key's check ran once per attempt the worker logs, at the end of the attempt
 * write: a `SELECT … FOR KEY SHARE` of the delivery row through SPI, one more small statement
 * (and a row lock, with its WAL record) per forwarded submission, on the row the same statement
 * had just updated (docs/restservices.md, "Connections and batches (the worker's hot path)"). Nothing depends on
 * the check: the attempt write inserts the entries of the rows its own UPDATE moved only
 * (restservices.repository.ts, ATTEMPT_WRITE_SQL), and that UPDATE holds the delivery row's lock
 * until the commit, so an entry is never written for a delivery deleted before or meanwhile.
 */
export class AttemptsWithoutDeliveryFk1764920000200 implements MigrationInterface {
  name = 'AttemptsWithoutDeliveryFk1764920000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_delivery_attempts DROP CONSTRAINT rest_delivery_attempts_delivery_row_id_fkey`);
    await q.query(`
      CREATE FUNCTION rest_deliveries_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM rest_delivery_attempts a USING gone g WHERE a.delivery_row_id = g.id;
        RETURN NULL;
      END $$`);
    // Per statement, over the deleted rows at once: a prune of 1,000 deliveries is one delete of their entries.
    await q.query(`CREATE TRIGGER rest_deliveries_deleted AFTER DELETE ON rest_deliveries REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION rest_deliveries_deleted()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS rest_deliveries_deleted ON rest_deliveries`);
    await q.query(`DROP FUNCTION IF EXISTS rest_deliveries_deleted()`);
    await q.query(`DELETE FROM rest_delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM rest_deliveries d WHERE d.id = a.delivery_row_id)`);
    await q.query(`ALTER TABLE rest_delivery_attempts ADD CONSTRAINT rest_delivery_attempts_delivery_row_id_fkey FOREIGN KEY (delivery_row_id) REFERENCES rest_deliveries(id) ON DELETE CASCADE`);
  }
}
