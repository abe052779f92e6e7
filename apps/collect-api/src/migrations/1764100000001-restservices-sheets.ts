import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spreadsheet sync: per-user OAuth 2.0 grants of the sheet provider, pending consent states, and
 * which sheet row holds which submission (so an edit rewrites its row).
 */
export class RestServicesSheets1764100000001 implements MigrationInterface {
  name = 'RestServicesSheets1764100000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sheets_grants (
        user_id int PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        access_token_enc text NOT NULL,
        refresh_token_enc text,
        expires_at timestamptz,
        date_modified timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE sheets_oauth_states (
        state varchar(64) PRIMARY KEY,
        user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        service_id int REFERENCES rest_services(id) ON DELETE CASCADE,
        redirect_uri varchar(2000) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE sheets_rows (
        service_id int NOT NULL REFERENCES rest_services(id) ON DELETE CASCADE,
        submission_id int NOT NULL,
        row_number int NOT NULL,
        PRIMARY KEY (service_id, submission_id)
      )`);
    // Who linked the sheet: deliveries use that user's grant.
    await q.query(`ALTER TABLE rest_services ADD COLUMN owner_user_id int REFERENCES users(id) ON DELETE SET NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_services DROP COLUMN IF EXISTS owner_user_id`);
    await q.query(`DROP TABLE IF EXISTS sheets_rows`);
    await q.query(`DROP TABLE IF EXISTS sheets_oauth_states`);
    await q.query(`DROP TABLE IF EXISTS sheets_grants`);
  }
}
