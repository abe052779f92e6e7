import type { DataSource } from 'typeorm';
import type { RateLimitBackend } from '@collect/platform';

/** Fixed-window counters in cas_rate_limits, shared by every replica. */
export class PostgresRateLimitBackend implements RateLimitBackend {
  constructor(private readonly ds: DataSource) {}

  /** Adds `n` hits to each key in one statement; a key whose window ended starts a new one. */
  async add(entries: Array<{ key: string; windowMs: number; n: number }>): Promise<Array<{ hits: number; msLeft: number }>> {
    const values = entries.map((_, i) => `($${3 * i + 1}, $${3 * i + 3}::int, now() + $${3 * i + 2} * interval '1 millisecond')`).join(', ');
    const rows: Array<{ key: string; hits: number; ms_left: string }> = await this.ds.query(
      `INSERT INTO cas_rate_limits AS r (key, hits, window_ends) VALUES ${values}
       ON CONFLICT (key) DO UPDATE SET
         hits = CASE WHEN r.window_ends <= now() THEN EXCLUDED.hits ELSE r.hits + EXCLUDED.hits END,
         window_ends = CASE WHEN r.window_ends <= now() THEN EXCLUDED.window_ends ELSE r.window_ends END
       RETURNING key, hits, extract(epoch FROM (window_ends - now())) * 1000 AS ms_left`,
      entries.flatMap((e) => [e.key, e.windowMs, e.n]),
    );
    const byKey = new Map(rows.map((r) => [r.key, { hits: r.hits, msLeft: Math.max(0, Number(r.ms_left)) }]));
    return entries.map((e) => byKey.get(e.key)!);
  }

  async deleteExpired(): Promise<void> {
    await this.ds.query(`DELETE FROM cas_rate_limits WHERE window_ends < now()`);
  }
}
