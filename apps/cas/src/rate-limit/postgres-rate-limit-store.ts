import type { DataSource } from 'typeorm';
import type { RateLimitStore } from '@collect/contracts';

/** Fixed-window counters in cas_rate_limits: one upsert per counted request. */
export class PostgresRateLimitStore implements RateLimitStore {
  constructor(private readonly ds: DataSource) {}

  async hit(key: string, windowMs: number): Promise<{ hits: number; msLeft: number }> {
    const rows: Array<{ hits: number; ms_left: string }> = await this.ds.query(
      `INSERT INTO cas_rate_limits AS r (key, hits, window_ends) VALUES ($1, 1, now() + $2 * interval '1 millisecond')
       ON CONFLICT (key) DO UPDATE SET
         hits = CASE WHEN r.window_ends <= now() THEN 1 ELSE r.hits + 1 END,
         window_ends = CASE WHEN r.window_ends <= now() THEN EXCLUDED.window_ends ELSE r.window_ends END
       RETURNING hits, extract(epoch FROM (window_ends - now())) * 1000 AS ms_left`,
      [key, windowMs],
    );
    return { hits: rows[0].hits, msLeft: Math.max(0, Number(rows[0].ms_left)) };
  }

  async deleteExpired(): Promise<void> {
    await this.ds.query(`DELETE FROM cas_rate_limits WHERE window_ends < now()`);
  }
}
