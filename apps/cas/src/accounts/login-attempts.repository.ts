import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface AttemptCount {
  key: string;
  attempts: number;
  /** Seconds until the window of this counter ends. */
  secondsLeft: number;
}

/** The lockout counters (cas_login_attempts), one row per username or address key. */
@Injectable()
export class LoginAttemptsRepository {
  constructor(private readonly ds: DataSource) {}

  /**
   * Adds one attempt to each key in a single statement and answers the counts after it: each
   * row is locked while it is updated, so concurrent attempts get distinct counts. A key whose
   * window ended starts a new one. Keys are taken in the order given (callers keep one order, so
   * two statements never wait on each other's rows in opposite orders).
   */
  async count(keys: string[], windowSeconds: number): Promise<AttemptCount[]> {
    const values = keys.map((_, i) => `($${i + 2}, 1, now() + $1 * interval '1 second')`).join(', ');
    const rows: Array<{ key: string; attempts: number; seconds_left: string }> = await this.ds.query(
      `INSERT INTO cas_login_attempts AS a (key, attempts, window_ends) VALUES ${values}
       ON CONFLICT (key) DO UPDATE SET
         attempts = CASE WHEN a.window_ends <= now() THEN 1 ELSE a.attempts + 1 END,
         window_ends = CASE WHEN a.window_ends <= now() THEN EXCLUDED.window_ends ELSE a.window_ends END
       RETURNING key, attempts, extract(epoch FROM (window_ends - now())) AS seconds_left`,
      [windowSeconds, ...keys],
    );
    const byKey = new Map(rows.map((r) => [r.key, { key: r.key, attempts: Number(r.attempts), secondsLeft: Math.max(0, Number(r.seconds_left)) }]));
    return keys.map((k) => byKey.get(k)!);
  }

  /** A success: the address's attempt is taken back, the user's count cleared. */
  async succeeded(userKey: string, ipKey: string): Promise<void> {
    await this.ds.query(`DELETE FROM cas_login_attempts WHERE key = $1`, [userKey]);
    await this.ds.query(`UPDATE cas_login_attempts SET attempts = greatest(attempts - 1, 0) WHERE key = $1`, [ipKey]);
  }

  async deleteExpired(): Promise<void> {
    await this.ds.query(`DELETE FROM cas_login_attempts WHERE window_ends < now()`);
  }
}
