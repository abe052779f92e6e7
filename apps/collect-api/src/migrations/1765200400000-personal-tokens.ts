import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Personal access tokens (docs/auth.md, "Personal access tokens"): found by `prefix` (the first
 * 12 characters, unique), checked against `token_hash` (SHA-256 of the whole token). A change
 * that decides whether a token is honoured (created, revoked, deleted) is told to every process
 * on `collect_changes` as `pat:<prefix>` at commit, so each drops its cached entry at once;
 * `last_used_at` is written in batches and notifies nobody.
 */
export class PersonalTokens1765200400000 implements MigrationInterface {
  name = 'PersonalTokens1765200400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE personal_tokens (
        id serial PRIMARY KEY,
        user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name varchar(100) NOT NULL,
        prefix varchar(12) NOT NULL UNIQUE,
        token_hash varchar(64) NOT NULL,
        scopes varchar(10)[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'submit', 'write']::varchar[]),
        form_ids int[],
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX personal_tokens_user_idx ON personal_tokens (user_id) WHERE revoked_at IS NULL`);
    await q.query(`
      CREATE TRIGGER personal_tokens_notify AFTER INSERT OR DELETE OR UPDATE OF prefix, token_hash, scopes, form_ids, expires_at, revoked_at, user_id
        ON personal_tokens FOR EACH ROW EXECUTE FUNCTION collect_notify_change('pat', 'prefix')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS personal_tokens`);
  }
}
