import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Profile fields on users; the API and temporary tokens (hashed lookup, encrypted copy). */
export class AuthTokens1763900000000 implements MigrationInterface {
  name = 'AuthTokens1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE users
        ADD COLUMN IF NOT EXISTS city varchar(255) NOT NULL DEFAULT '',
        ADD COLUMN IF NOT EXISTS country varchar(2) NOT NULL DEFAULT '',
        ADD COLUMN IF NOT EXISTS organization varchar(255) NOT NULL DEFAULT '',
        ADD COLUMN IF NOT EXISTS website varchar(255) NOT NULL DEFAULT '',
        ADD COLUMN IF NOT EXISTS twitter varchar(255) NOT NULL DEFAULT '',
        ADD COLUMN IF NOT EXISTS require_auth boolean NOT NULL DEFAULT false`);
    for (const table of ['api_tokens', 'temp_tokens']) {
      await q.query(`
        CREATE TABLE IF NOT EXISTS ${table} (
          user_id integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
          key_hash char(64) NOT NULL UNIQUE,
          key_encrypted text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        )`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS temp_tokens`);
    await q.query(`DROP TABLE IF EXISTS api_tokens`);
    await q.query(`ALTER TABLE users DROP COLUMN IF EXISTS city, DROP COLUMN IF EXISTS country, DROP COLUMN IF EXISTS organization,
      DROP COLUMN IF EXISTS website, DROP COLUMN IF EXISTS twitter, DROP COLUMN IF EXISTS require_auth`);
  }
}
