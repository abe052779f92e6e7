import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request counters of the token and login rate limits, shared by every CAS replica (the CAS has
 * no Redis). UNLOGGED: counters are worth no WAL and may be lost in a crash.
 */
export class RateLimits1764400000000 implements MigrationInterface {
  name = 'RateLimits1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNLOGGED TABLE IF NOT EXISTS cas_rate_limits (
      key text PRIMARY KEY,
      hits integer NOT NULL,
      window_ends timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS cas_rate_limits_window_ends ON cas_rate_limits (window_ends)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS cas_rate_limits`);
  }
}
