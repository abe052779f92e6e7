import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `rest_deliveries.delivery_id` loses its UNIQUE constraint (and with it its index). No query
 * looks a row up by it: the id is generated in the outbox statement (`gen_random_uuid()`, 122
 * random bits) and only travels out, in `X-Delivery-Id`, `webhook-id` and the delivery log. Its
 * B-tree index took an entry at a random leaf for every version of every row (the outbox insert,
 * the claim and the attempt write: none of them HOT), the costliest of the table's index entries
 * (with full_page_writes, a random leaf is a full page image after every checkpoint); measured
 * in docs/restservices.md, "Connections and batches (the worker's hot path)".
 * Uniqueness rests on the generator: a repeat among 10^12 deliveries has a probability of about
 * 10^-13 (docs/restservices.md, "Connections and batches").
 */
export class DeliveriesWithoutDeliveryIdIndex1764930000000 implements MigrationInterface {
  name = 'DeliveriesWithoutDeliveryIdIndex1764930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_deliveries DROP CONSTRAINT IF EXISTS rest_deliveries_delivery_id_key`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_deliveries ADD CONSTRAINT rest_deliveries_delivery_id_key UNIQUE (delivery_id)`);
  }
}
