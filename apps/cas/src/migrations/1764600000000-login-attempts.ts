import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The login lockout counts attempts in one row per username and per address, incremented by a
 * single INSERT ... ON CONFLICT DO UPDATE ... RETURNING before the password is checked: the row
 * lock makes check-and-count atomic (docs/security.md "Atomic check-then-act"). It replaces the
 * log of failures, which was counted, then checked, then appended to: parallel guesses each saw
 * the count before any of them was added. Logged (not UNLOGGED like cas_rate_limits): a crash
 * must not lift a lockout.
 */
export class LoginAttempts1764600000000 implements MigrationInterface {
  name = 'LoginAttempts1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE cas_login_attempts (
      key text PRIMARY KEY,
      attempts integer NOT NULL,
      window_ends timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX cas_login_attempts_window_ends ON cas_login_attempts (window_ends)`);
    await q.query(`DROP TABLE IF EXISTS cas_login_failures`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE cas_login_failures (
        id bigserial PRIMARY KEY,
        username varchar(150) NOT NULL,
        ip varchar(64) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX cas_login_failures_username ON cas_login_failures (username, created_at)`);
    await q.query(`CREATE INDEX cas_login_failures_ip ON cas_login_failures (ip, created_at)`);
    await q.query(`DROP TABLE IF EXISTS cas_login_attempts`);
  }
}
