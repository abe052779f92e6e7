import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

export interface PendingLoginRow {
  browser_hash: string;
  code_verifier: string;
  nonce: string;
  return_to: string;
  expires_at: Date;
}

export interface SessionRow {
  user_id: number;
  cas_subject: string;
  tokens_enc: string;
  expires_at: Date;
  username: string;
  is_active: boolean;
}

/** `cas_pending_logins` and `cas_sessions` (migration 1764300000000). Keys are SHA-256 hashes. */
@Injectable()
export class CasSessionsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async insertPendingLogin(stateHash: string, row: PendingLoginRow): Promise<void> {
    // Abandoned sign-ins would pile up otherwise; the index on expires_at keeps this cheap.
    await this.ds.query(`DELETE FROM cas_pending_logins WHERE expires_at < now()`);
    await this.ds.query(
      `INSERT INTO cas_pending_logins (state_hash, browser_hash, code_verifier, nonce, return_to, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [stateHash, row.browser_hash, row.code_verifier, row.nonce, row.return_to, row.expires_at],
    );
  }

  /** Removes and returns the entry: whoever comes second (a replayed callback) gets null. */
  async takePendingLogin(stateHash: string): Promise<PendingLoginRow | null> {
    const [rows] = await this.ds.query(`DELETE FROM cas_pending_logins WHERE state_hash = $1 RETURNING browser_hash, code_verifier, nonce, return_to, expires_at`, [stateHash]);
    return (rows as PendingLoginRow[])[0] ?? null;
  }

  async insertSession(idHash: string, userId: number, casSubject: string, tokensEnc: string, expiresAt: Date): Promise<void> {
    await this.ds.query(`DELETE FROM cas_sessions WHERE expires_at < now()`);
    await this.ds.query(`INSERT INTO cas_sessions (id_hash, user_id, cas_subject, tokens_enc, expires_at) VALUES ($1, $2, $3, $4, $5)`, [idHash, userId, casSubject, tokensEnc, expiresAt]);
  }

  async findSession(idHash: string): Promise<SessionRow | null> {
    const rows: SessionRow[] = await this.ds.query(
      `SELECT s.user_id, s.cas_subject, s.tokens_enc, s.expires_at, u.username, u.is_active
         FROM cas_sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1`,
      [idHash],
    );
    return rows[0] ?? null;
  }

  async deleteSession(idHash: string): Promise<{ tokens_enc: string } | null> {
    const [rows] = await this.ds.query(`DELETE FROM cas_sessions WHERE id_hash = $1 RETURNING tokens_enc`, [idHash]);
    return (rows as Array<{ tokens_enc: string }>)[0] ?? null;
  }

  async deleteSessionsOfUser(userId: number): Promise<number> {
    const [, count] = await this.ds.query(`DELETE FROM cas_sessions WHERE user_id = $1`, [userId]);
    return Number(count) || 0;
  }
}
