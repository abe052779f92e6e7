import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * collect-api as a CAS application (docs/cas-integration.md): a local user is linked to a CAS
 * subject (on-boarded person) or a CAS client (service account); BFF sessions and pending
 * sign-ins are kept server-side, keyed by hashes of the random values the browser holds.
 */
export class CasIntegration1764300000000 implements MigrationInterface {
  name = 'CasIntegration1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN IF NOT EXISTS cas_subject varchar(255), ADD COLUMN IF NOT EXISTS cas_client_id varchar(255), ADD COLUMN IF NOT EXISTS is_service_account boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS users_cas_subject_key ON users (cas_subject) WHERE cas_subject IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS users_cas_client_id_key ON users (cas_client_id) WHERE cas_client_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS cas_pending_logins (
        state_hash char(64) PRIMARY KEY,
        browser_hash char(64) NOT NULL,
        code_verifier varchar(128) NOT NULL,
        nonce varchar(128) NOT NULL,
        return_to text NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_pending_logins_expires_idx ON cas_pending_logins (expires_at)`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS cas_sessions (
        id_hash char(64) PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        cas_subject varchar(255) NOT NULL,
        tokens_enc text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_sessions_user_idx ON cas_sessions (user_id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_sessions_expires_idx ON cas_sessions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS cas_sessions`);
    await q.query(`DROP TABLE IF EXISTS cas_pending_logins`);
    await q.query(`DROP INDEX IF EXISTS users_cas_client_id_key`);
    await q.query(`DROP INDEX IF EXISTS users_cas_subject_key`);
    await q.query(`ALTER TABLE users DROP COLUMN IF EXISTS is_service_account, DROP COLUMN IF EXISTS cas_client_id, DROP COLUMN IF EXISTS cas_subject`);
  }
}
