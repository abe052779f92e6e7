import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The local OAuth 2.0 provider: applications, authorization codes, access and refresh tokens. */
export class OAuth21763900000001 implements MigrationInterface {
  name = 'OAuth21763900000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS oauth_applications (
        id serial PRIMARY KEY,
        client_id varchar(100) NOT NULL UNIQUE,
        client_secret_hash char(64),
        name varchar(255) NOT NULL,
        client_type varchar(32) NOT NULL CHECK (client_type IN ('confidential', 'public')),
        authorization_grant_type varchar(32) NOT NULL,
        redirect_uris text NOT NULL,
        user_id integer REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS oauth_applications_user_idx ON oauth_applications (user_id)`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS oauth_grants (
        id serial PRIMARY KEY,
        code_hash char(64) NOT NULL UNIQUE,
        application_id integer NOT NULL REFERENCES oauth_applications(id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        redirect_uri_given boolean NOT NULL,
        scope varchar(255) NOT NULL,
        code_challenge varchar(128),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS oauth_tokens (
        id serial PRIMARY KEY,
        kind varchar(16) NOT NULL CHECK (kind IN ('access', 'refresh')),
        token_hash char(64) NOT NULL UNIQUE,
        application_id integer NOT NULL REFERENCES oauth_applications(id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        grant_id integer NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
        pair_id integer,
        scope varchar(255) NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS oauth_tokens_grant_idx ON oauth_tokens (grant_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS oauth_tokens`);
    await q.query(`DROP TABLE IF EXISTS oauth_grants`);
    await q.query(`DROP TABLE IF EXISTS oauth_applications`);
  }
}
