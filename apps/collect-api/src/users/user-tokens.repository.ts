import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** The owner's fields the auth hot path needs, read together with a token in one query. */
export interface TokenOwnerRow {
  user_id: number;
  username: string;
  is_superuser: boolean;
  is_active: boolean;
  created_at: Date;
}

export type TokenTable = 'api_tokens' | 'temp_tokens';

/** Queries on `api_tokens` and `temp_tokens` (one row per user each). */
@Injectable()
export class UserTokensRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async findOwnerByHash(table: TokenTable, keyHash: string): Promise<TokenOwnerRow | null> {
    const rows: TokenOwnerRow[] = await this.ds.query(
      `SELECT t.user_id, t.created_at, u.username, u.is_superuser, u.is_active
         FROM ${table} t JOIN users u ON u.id = t.user_id WHERE t.key_hash = $1`,
      [keyHash],
    );
    return rows[0] ?? null;
  }

  async findByUser(table: TokenTable, userId: number): Promise<{ key_hash: string; key_encrypted: string; created_at: Date } | null> {
    const rows = await this.ds.query(`SELECT key_hash, key_encrypted, created_at FROM ${table} WHERE user_id = $1`, [userId]);
    return rows[0] ?? null;
  }

  /**
   * Stores a new key for the user. With `replaceIfOlderThan`, an existing row is replaced only
   * when created before that instant, so concurrent callers converge on one token.
   */
  async upsert(table: TokenTable, userId: number, keyHash: string, keyEncrypted: string, replaceIfOlderThan?: Date): Promise<void> {
    const where = replaceIfOlderThan ? `WHERE ${table}.created_at <= $4` : '';
    await this.ds.query(
      `INSERT INTO ${table} (user_id, key_hash, key_encrypted, created_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (user_id) DO UPDATE SET key_hash = EXCLUDED.key_hash, key_encrypted = EXCLUDED.key_encrypted, created_at = now() ${where}`,
      replaceIfOlderThan ? [userId, keyHash, keyEncrypted, replaceIfOlderThan] : [userId, keyHash, keyEncrypted],
    );
  }

  /** Inserts when the user has no row yet; leaves an existing one alone. */
  async insertIfAbsent(table: TokenTable, userId: number, keyHash: string, keyEncrypted: string): Promise<void> {
    await this.ds.query(
      `INSERT INTO ${table} (user_id, key_hash, key_encrypted, created_at) VALUES ($1, $2, $3, now()) ON CONFLICT (user_id) DO NOTHING`,
      [userId, keyHash, keyEncrypted],
    );
  }

  /** Deletes the user's row; returns the deleted hash, or null when there was none. */
  async deleteForUser(table: TokenTable, userId: number): Promise<string | null> {
    const [rows] = await this.ds.query(`DELETE FROM ${table} WHERE user_id = $1 RETURNING key_hash`, [userId]);
    return rows?.[0]?.key_hash ?? null;
  }
}
