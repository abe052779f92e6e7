import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface SheetsGrantRow {
  access_token_enc: string;
  refresh_token_enc: string | null;
  expires_at: Date | null;
}

/** Grants, consent states and the submission → row map of spreadsheet services. */
@Injectable()
export class SheetsRepository {
  constructor(private readonly ds: DataSource) {}

  async grant(userId: number): Promise<SheetsGrantRow | null> {
    const rows = (await this.ds.query(`SELECT access_token_enc, refresh_token_enc, expires_at FROM sheets_grants WHERE user_id = $1`, [userId])) as SheetsGrantRow[];
    return rows[0] ?? null;
  }

  async saveGrant(userId: number, accessEnc: string, refreshEnc: string | null, expiresAt: Date | null): Promise<void> {
    await this.ds.query(
      `INSERT INTO sheets_grants (user_id, access_token_enc, refresh_token_enc, expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO UPDATE SET access_token_enc = $2, refresh_token_enc = COALESCE($3, sheets_grants.refresh_token_enc), expires_at = $4, date_modified = now()`,
      [userId, accessEnc, refreshEnc, expiresAt],
    );
  }

  async saveState(state: string, userId: number, serviceId: number, redirectUri: string): Promise<void> {
    await this.ds.query(`INSERT INTO sheets_oauth_states (state, user_id, service_id, redirect_uri) VALUES ($1, $2, $3, $4)`, [state, userId, serviceId, redirectUri]);
  }

  /** Single use, only by the user it was issued to; states older than an hour are void. */
  async takeState(state: string, userId: number): Promise<{ user_id: number; service_id: number | null; redirect_uri: string } | null> {
    const result = (await this.ds.query(
      `DELETE FROM sheets_oauth_states WHERE state = $1 AND user_id = $2 RETURNING user_id, service_id, redirect_uri, created_at > now() - interval '1 hour' AS fresh`,
      [state, userId],
    )) as [Array<{ user_id: number; service_id: number | null; redirect_uri: string; fresh: boolean }>, number];
    const row = result[0]?.[0];
    return row && row.fresh ? row : null;
  }

  async setOwner(serviceId: number, userId: number): Promise<void> {
    await this.ds.query(`UPDATE rest_services SET owner_user_id = $2, date_modified = now() WHERE id = $1`, [serviceId, userId]);
  }

  async setServiceUrl(serviceId: number, url: string): Promise<void> {
    await this.ds.query(`UPDATE rest_services SET service_url = $2, date_modified = now() WHERE id = $1`, [serviceId, url]);
  }

  async ownerOf(serviceId: number): Promise<number | null> {
    const rows = (await this.ds.query(`SELECT owner_user_id FROM rest_services WHERE id = $1`, [serviceId])) as Array<{ owner_user_id: number | null }>;
    return rows[0]?.owner_user_id ?? null;
  }

  /** Merges keys into the service's options (spreadsheet id, back-fill cursor). */
  async patchOptions(serviceId: number, patch: Record<string, unknown>, activate?: boolean): Promise<void> {
    await this.ds.query(
      `UPDATE rest_services SET options = options || $2::jsonb, active = COALESCE($3, active), inactive_reason = CASE WHEN $3 THEN NULL ELSE inactive_reason END, date_modified = now() WHERE id = $1`,
      [serviceId, JSON.stringify(patch), activate ?? null],
    );
  }

  async rowOf(serviceId: number, submissionId: number): Promise<number | null> {
    const rows = (await this.ds.query(`SELECT row_number FROM sheets_rows WHERE service_id = $1 AND submission_id = $2`, [serviceId, submissionId])) as Array<{ row_number: number }>;
    return rows[0]?.row_number ?? null;
  }

  async saveRows(serviceId: number, pairs: Array<[submissionId: number, row: number]>): Promise<void> {
    if (!pairs.length) return;
    await this.ds.query(
      `INSERT INTO sheets_rows (service_id, submission_id, row_number) SELECT $1, s, r FROM unnest($2::int[], $3::int[]) AS t(s, r)
       ON CONFLICT (service_id, submission_id) DO UPDATE SET row_number = EXCLUDED.row_number`,
      [serviceId, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
  }
}
