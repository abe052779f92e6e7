import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface StoredPayload {
  payload: Record<string, unknown>;
  consumed_at: Date | null;
}

/** SQL for oidc-provider's models, kept as plain statements: this is the token hot path. */
@Injectable()
export class OidcPayloadsRepository {
  constructor(private readonly ds: DataSource) {}

  async upsert(model: string, id: string, payload: Record<string, unknown>, expiresInSeconds: number | undefined): Promise<void> {
    await this.ds.query(
      `INSERT INTO oidc_payloads (model, id, payload, grant_id, user_code, uid, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
      [model, id, payload, payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresInSeconds ?? null],
    );
  }

  find(model: string, id: string): Promise<StoredPayload | undefined> {
    return this.one(`SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND id = $2 AND (expires_at IS NULL OR expires_at > now())`, [model, id]);
  }

  findBy(model: string, column: 'uid' | 'user_code', value: string): Promise<StoredPayload | undefined> {
    return this.one(`SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now())`, [model, value]);
  }

  /**
   * Marks a single-use entry consumed, once: a conditional UPDATE, so of two concurrent
   * redemptions exactly one changes the row. Answers whether this call did, and the entry's
   * grant (to revoke when it did not).
   */
  async consume(model: string, id: string): Promise<{ consumed: boolean; grantId: string | null }> {
    const [rows] = (await this.ds.query(
      `UPDATE oidc_payloads SET consumed_at = now() WHERE model = $1 AND id = $2 AND consumed_at IS NULL RETURNING grant_id`,
      [model, id],
    )) as [Array<{ grant_id: string | null }>, number];
    if (rows.length) return { consumed: true, grantId: rows[0].grant_id };
    const other: Array<{ grant_id: string | null }> = await this.ds.query(`SELECT grant_id FROM oidc_payloads WHERE model = $1 AND id = $2`, [model, id]);
    return { consumed: false, grantId: other[0]?.grant_id ?? null };
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.ds.query(`DELETE FROM oidc_payloads WHERE model = $1 AND id = $2`, [model, id]);
  }

  /**
   * Every model of the grant (codes, refresh tokens...), whatever its type, and the grant itself:
   * a refresh token stored by a request that was already past its checks then finds no grant.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.ds.query(`DELETE FROM oidc_payloads WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [grantId]);
  }

  /** Removes expired rows in batches; returns how many went. */
  async deleteExpired(batch = 5000): Promise<number> {
    const res = await this.ds.query(
      `DELETE FROM oidc_payloads WHERE ctid IN (SELECT ctid FROM oidc_payloads WHERE expires_at < now() LIMIT $1)`,
      [batch],
    );
    return Array.isArray(res) ? Number(res[1] ?? 0) : 0;
  }

  private async one(sql: string, params: unknown[]): Promise<StoredPayload | undefined> {
    const rows: StoredPayload[] = await this.ds.query(sql, params);
    return rows[0];
  }
}
