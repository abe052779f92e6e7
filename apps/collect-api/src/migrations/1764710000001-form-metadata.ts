import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Form media (docs/forms.md, "Form media and the OpenRosa manifest"): files attached to a form
 * (`POST /api/v1/metadata`, `data_type=media`) that ODK clients download through the manifest.
 * One file name per form; the bytes live in the file storage at `data_file`.
 */
export class FormMetadata1764710000001 implements MigrationInterface {
  name = 'FormMetadata1764710000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE form_metadata (
        id serial PRIMARY KEY,
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        data_type varchar(30) NOT NULL,
        data_value varchar(255) NOT NULL,
        data_file varchar(1024) NOT NULL,
        data_file_type varchar(100) NOT NULL,
        file_hash varchar(40) NOT NULL,
        size bigint NOT NULL,
        date_created timestamptz NOT NULL DEFAULT now(),
        UNIQUE (form_id, data_type, data_value)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS form_metadata`);
  }
}
