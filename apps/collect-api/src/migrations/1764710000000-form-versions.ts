import type { MigrationInterface, QueryRunner } from 'typeorm';
import { withFormhubUuid } from '../openrosa/xform-edit.js';

/**
 * Form versions (docs/forms.md, "Form versions"): every definition a form has had, the current
 * one included, so data-out can keep the columns of older versions. Existing forms get
 * `<formhub><uuid/></formhub>` and its bind in their stored XForm (docs/forms.md,
 * "formhub/uuid"), then their definition becomes their first version. `submissions.version`
 * (`_version`) exists since the forms migration.
 */
export class FormVersions1764710000000 implements MigrationInterface {
  name = 'FormVersions1764710000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE form_versions (
        id serial PRIMARY KEY,
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        version varchar(100) NOT NULL,
        title varchar(255) NOT NULL,
        root_name varchar(100) NOT NULL,
        xml text NOT NULL,
        json_definition jsonb,
        fields jsonb NOT NULL,
        date_created timestamptz NOT NULL DEFAULT now(),
        UNIQUE (form_id, version)
      )`);
    const forms: Array<{ id: number; uuid: string; root_name: string; xml: string }> = await q.query(`SELECT id, uuid, root_name, xml FROM forms`);
    for (const form of forms) {
      let xml: string;
      try {
        xml = withFormhubUuid(form.xml, form.root_name, form.uuid.replace(/-/g, ''));
      } catch {
        continue; // a document whose primary instance cannot be found stays as it was
      }
      if (xml !== form.xml) await q.query(`UPDATE forms SET xml = $2 WHERE id = $1`, [form.id, xml]);
    }
    await q.query(`
      INSERT INTO form_versions (form_id, version, title, root_name, xml, json_definition, fields, date_created)
      SELECT id, version, title, root_name, xml, json_definition, fields, date_modified FROM forms`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS form_versions`);
  }
}
