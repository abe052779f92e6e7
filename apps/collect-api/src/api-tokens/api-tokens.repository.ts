import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { PersonalTokenScope } from '../auth/authenticated-user.js';

/** A personal access token as stored (never the token itself: its hash). */
export interface PersonalTokenRow {
  id: number;
  userId: number;
  name: string;
  prefix: string;
  tokenHash: string;
  scopes: PersonalTokenScope[];
  forms: number[] | null;
  expiresAt: Date;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A token found by prefix, with what the auth hot path needs of its user. */
export interface PersonalTokenOwnerRow extends PersonalTokenRow {
  username: string;
  isSuperuser: boolean;
  isActive: boolean;
}

/** What creating a token writes; the rest of a row is the database's. */
export type NewPersonalToken = Pick<PersonalTokenRow, 'userId' | 'name' | 'prefix' | 'tokenHash' | 'scopes' | 'forms' | 'expiresAt'>;

const COLUMNS = `t.id, t.user_id, t.name, t.prefix, t.token_hash, t.scopes, t.form_ids, t.expires_at, t.created_at, t.last_used_at, t.revoked_at`;

/** Queries on `personal_tokens`. */
@Injectable()
export class ApiTokensRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  /** The new row, or null when the prefix is taken (the caller draws another token). */
  async insert(t: NewPersonalToken): Promise<PersonalTokenRow | null> {
    const rows = await this.ds.query(
      `INSERT INTO personal_tokens AS t (user_id, name, prefix, token_hash, scopes, form_ids, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (prefix) DO NOTHING RETURNING ${COLUMNS}`,
      [t.userId, t.name, t.prefix, t.tokenHash, t.scopes, t.forms, t.expiresAt],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  async findByPrefix(prefix: string): Promise<PersonalTokenOwnerRow | null> {
    const rows = await this.ds.query(
      `SELECT ${COLUMNS}, u.username, u.is_superuser, u.is_active FROM personal_tokens t JOIN users u ON u.id = t.user_id WHERE t.prefix = $1`,
      [prefix],
    );
    const r = rows[0];
    return r ? { ...toRow(r), username: r.username, isSuperuser: r.is_superuser, isActive: r.is_active } : null;
  }

  /** The user's tokens that are not revoked, newest first. */
  async listLive(userId: number): Promise<PersonalTokenRow[]> {
    const rows = await this.ds.query(`SELECT ${COLUMNS} FROM personal_tokens t WHERE t.user_id = $1 AND t.revoked_at IS NULL ORDER BY t.id DESC`, [userId]);
    return rows.map(toRow);
  }

  async findLive(id: number): Promise<PersonalTokenRow | null> {
    const rows = await this.ds.query(`SELECT ${COLUMNS} FROM personal_tokens t WHERE t.id = $1 AND t.revoked_at IS NULL`, [id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Revokes a live token; its prefix, or null when there was none to revoke. */
  async revoke(id: number): Promise<string | null> {
    const [rows] = await this.ds.query(`UPDATE personal_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING prefix`, [id]);
    return rows[0]?.prefix ?? null;
  }

  /** One statement for a batch of uses: each token's `last_used_at` moves forward only. */
  async recordUses(uses: ReadonlyMap<number, Date>): Promise<void> {
    if (!uses.size) return;
    await this.ds.query(
      `UPDATE personal_tokens t SET last_used_at = u.at
         FROM unnest($1::int[], $2::timestamptz[]) AS u(id, at)
        WHERE t.id = u.id AND (t.last_used_at IS NULL OR t.last_used_at < u.at)`,
      [[...uses.keys()], [...uses.values()]],
    );
  }
}

function toRow(r: Record<string, unknown>): PersonalTokenRow {
  return {
    id: Number(r.id),
    userId: Number(r.user_id),
    name: r.name as string,
    prefix: r.prefix as string,
    tokenHash: r.token_hash as string,
    scopes: r.scopes as PersonalTokenScope[],
    forms: (r.form_ids as number[] | null) ?? null,
    expiresAt: new Date(r.expires_at as string),
    createdAt: new Date(r.created_at as string),
    lastUsedAt: r.last_used_at ? new Date(r.last_used_at as string) : null,
    revokedAt: r.revoked_at ? new Date(r.revoked_at as string) : null,
  };
}
