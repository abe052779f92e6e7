import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An asynchronous export is of a form or of an entity list (docs/exports.md, "Asynchronous
 * exports"): `entity_list_id` beside `form_id`, exactly one of them set. No foreign key, as
 * `form_id` has none: the export is checked against the live list on every read.
 */
export class ExportEntityLists1765200800000 implements MigrationInterface {
  name = 'ExportEntityLists1765200800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE export_jobs ADD COLUMN entity_list_id int, ALTER COLUMN form_id DROP NOT NULL`);
    await q.query(`ALTER TABLE export_jobs ADD CONSTRAINT export_jobs_subject CHECK ((form_id IS NULL) <> (entity_list_id IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM export_jobs WHERE form_id IS NULL`);
    await q.query(`ALTER TABLE export_jobs DROP CONSTRAINT IF EXISTS export_jobs_subject, DROP COLUMN IF EXISTS entity_list_id, ALTER COLUMN form_id SET NOT NULL`);
  }
}
