import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The dataset id is the form's (docs/restservices.md, "`_bamboo_dataset_id`"): every submission
 * of the form shows it. Filled from what is known: the id a dataset service answered last (the
 * newest submission that stored one), and over that the `dataset_id` a dataset service of the
 * form is configured with. Adding a column with a constant default rewrites no rows.
 */
export class FormDatasetId1765200500000 implements MigrationInterface {
  name = 'FormDatasetId1765200500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE forms ADD COLUMN bamboo_dataset_id varchar(100) NOT NULL DEFAULT ''`);
    await q.query(`
      UPDATE forms f SET bamboo_dataset_id = s.bamboo_dataset_id
      FROM (SELECT DISTINCT ON (form_id) form_id, bamboo_dataset_id FROM submissions WHERE bamboo_dataset_id <> '' ORDER BY form_id, id DESC) s
      WHERE f.id = s.form_id`);
    await q.query(`
      UPDATE forms f SET bamboo_dataset_id = left(r.options->>'dataset_id', 100)
      FROM (SELECT DISTINCT ON (form_id) form_id, options FROM rest_services WHERE name = 'dataset_service' AND coalesce(options->>'dataset_id', '') <> '' ORDER BY form_id, id DESC) r
      WHERE f.id = r.form_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE forms DROP COLUMN IF EXISTS bamboo_dataset_id`);
  }
}
