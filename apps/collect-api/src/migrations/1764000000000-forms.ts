import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Forms, per-form roles, submissions, attachments, merged datasets and dataviews (docs/forms.md). */
export class Forms1764000000000 implements MigrationInterface {
  name = 'Forms1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE forms (
        id serial PRIMARY KEY,
        uuid uuid NOT NULL UNIQUE,
        id_string varchar(100) NOT NULL,
        title varchar(255) NOT NULL,
        owner_id int NOT NULL REFERENCES users(id),
        root_name varchar(100) NOT NULL,
        version varchar(100) NOT NULL DEFAULT '',
        xml text NOT NULL,
        json_definition jsonb,
        fields jsonb NOT NULL,
        accepting_submissions boolean NOT NULL DEFAULT true,
        num_of_submissions int NOT NULL DEFAULT 0,
        last_submission_time timestamptz,
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    // One live form per (owner, id_string); a deleted one frees the id_string.
    await q.query(`CREATE UNIQUE INDEX forms_owner_id_string_uq ON forms (owner_id, id_string) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX forms_id_string_idx ON forms (id_string) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE form_roles (
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role varchar(20) NOT NULL CHECK (role IN ('owner', 'manager', 'editor', 'dataentry', 'readonly')),
        PRIMARY KEY (form_id, user_id)
      )`);
    await q.query(`CREATE INDEX form_roles_user_idx ON form_roles (user_id)`);
    await q.query(`
      CREATE TABLE submissions (
        id serial PRIMARY KEY,
        form_id int NOT NULL REFERENCES forms(id),
        uuid varchar(255) NOT NULL,
        json jsonb NOT NULL,
        xml text NOT NULL,
        content_hash varchar(64) NOT NULL,
        status varchar(50) NOT NULL DEFAULT 'submitted_via_web',
        submitted_by_id int REFERENCES users(id) ON DELETE SET NULL,
        version varchar(100) NOT NULL DEFAULT '',
        edited boolean NOT NULL DEFAULT false,
        bamboo_dataset_id varchar(100) NOT NULL DEFAULT '',
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    // The instanceID decides idempotency; the unique index makes concurrent duplicates safe.
    await q.query(`CREATE UNIQUE INDEX submissions_form_uuid_uq ON submissions (form_id, uuid)`);
    await q.query(`CREATE INDEX submissions_form_live_idx ON submissions (form_id, id) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE attachments (
        id serial PRIMARY KEY,
        submission_id int NOT NULL REFERENCES submissions(id),
        form_id int NOT NULL REFERENCES forms(id),
        filename varchar(500) NOT NULL UNIQUE,
        name varchar(255) NOT NULL,
        mimetype varchar(100) NOT NULL,
        size bigint NOT NULL,
        field_xpath varchar(255),
        date_created timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX attachments_submission_idx ON attachments (submission_id)`);
    await q.query(`CREATE INDEX attachments_form_live_idx ON attachments (form_id, id) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE merged_datasets (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        owner_id int NOT NULL REFERENCES users(id),
        project varchar(255),
        form_ids int[] NOT NULL,
        date_created timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`
      CREATE TABLE dataviews (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        form_id int NOT NULL REFERENCES forms(id),
        owner_id int NOT NULL REFERENCES users(id),
        project varchar(255),
        columns jsonb NOT NULL,
        query jsonb NOT NULL,
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX dataviews_form_idx ON dataviews (form_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['dataviews', 'merged_datasets', 'attachments', 'submissions', 'form_roles', 'forms']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
