import type { DataSource } from 'typeorm';
import type { SealedPrivateKey } from '../encryption/key-sealing.js';

export interface ServerKeyRow {
  form_id: number;
  key_id: string;
  sealed: SealedPrivateKey;
}

/** The `server`-mode rows of `form_encryption_keys`, read and re-sealed (docs/encryption.md "Rotating ENCRYPTION_KEK"). */
export class KekRotationRepository {
  constructor(private readonly db: Pick<DataSource, 'query'>) {}

  serverKeys(): Promise<ServerKeyRow[]> {
    return this.db.query(`SELECT form_id, key_id, sealed FROM form_encryption_keys WHERE mode = 'server' AND sealed IS NOT NULL ORDER BY form_id, key_id`);
  }

  /** Replaces a sealed key only if it is still the one read (a concurrent run re-sealed it already): true when replaced. */
  async replaceSealed(row: ServerKeyRow, next: SealedPrivateKey): Promise<boolean> {
    const updated: unknown[] = await this.db.query(
      `UPDATE form_encryption_keys SET sealed = $3::jsonb WHERE form_id = $1 AND key_id = $2 AND sealed = $4::jsonb RETURNING form_id`,
      [row.form_id, row.key_id, JSON.stringify(next), JSON.stringify(row.sealed)],
    );
    // TypeORM answers an UPDATE as [rows, count].
    const rows = Array.isArray(updated[0]) ? (updated[0] as unknown[]) : updated;
    return rows.length === 1;
  }
}
