import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `users.credentials_reset_at`: when an existing account is taken over by configuration or the
 * admin command (new password, promotion to platform admin, reactivation), every credential it
 * had is revoked (docs/security.md, "Promoting an existing account"). Tokens are rows and are
 * deleted or revoked; `/o/` login sessions are signed cookies, so a session issued before this
 * instant no longer counts.
 */
export class CredentialsReset1764600000000 implements MigrationInterface {
  name = 'CredentialsReset1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN credentials_reset_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users DROP COLUMN IF EXISTS credentials_reset_at`);
  }
}
