import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the cas-api user search: `ILIKE '%text%'` on username, email, given and family
 * name (and the full name) is served by pg_trgm GIN indexes, so a search at 100k users stays in
 * milliseconds; the exact `username=` / `email=` filters are case-insensitive and use lower().
 * pg_trgm is a trusted extension (PostgreSQL ≥ 13): the database owner may create it.
 */
export class UserSearchIndexes1764000000000 implements MigrationInterface {
  name = 'UserSearchIndexes1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_username_trgm ON cas_accounts USING gin (username gin_trgm_ops) WITH (fastupdate = off)`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_email_trgm ON cas_accounts USING gin (email gin_trgm_ops) WITH (fastupdate = off)`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_given_name_trgm ON cas_accounts USING gin (given_name gin_trgm_ops) WITH (fastupdate = off)`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_family_name_trgm ON cas_accounts USING gin (family_name gin_trgm_ops) WITH (fastupdate = off)`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_full_name_trgm ON cas_accounts USING gin ((given_name || ' ' || family_name) gin_trgm_ops) WITH (fastupdate = off)`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_lower_username ON cas_accounts (lower(username))`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_accounts_lower_email ON cas_accounts (lower(email))`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['username_trgm', 'email_trgm', 'given_name_trgm', 'family_name_trgm', 'full_name_trgm', 'lower_username', 'lower_email']) {
      await q.query(`DROP INDEX IF EXISTS cas_accounts_${name}`);
    }
    // pg_trgm stays: other objects may use it.
  }
}
