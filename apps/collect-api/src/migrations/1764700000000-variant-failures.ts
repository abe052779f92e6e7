import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An image attachment whose thumbnail could not be made (undecodable, over
 * MEDIA_VARIANT_MAX_INPUT_PIXELS) keeps the reason here, so later requests answer the same 422
 * without reading and decoding the file again (docs/media.md).
 */
export class VariantFailures1764700000000 implements MigrationInterface {
  name = 'VariantFailures1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE attachments ADD COLUMN variant_error varchar(255)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE attachments DROP COLUMN IF EXISTS variant_error`);
  }
}
