import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { SealedPrivateKey } from '../encryption/key-sealing.js';
import type { EncryptionMode } from './form-encryption.dto.js';

export interface FormKeyRow {
  form_id: number;
  key_id: string;
  mode: EncryptionMode;
  hint: string | null;
  public_key: string;
  sealed: SealedPrivateKey | null;
  created_at: Date;
}

/** Queries on `form_encryption_keys` (docs/encryption.md "Keys and form versions"). */
@Injectable()
export class FormEncryptionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Keeps the key; the same public key given again keeps its first row. */
  async insert(row: Omit<FormKeyRow, 'created_at'> & { created_by: number | null }): Promise<void> {
    await this.db.query(
      `INSERT INTO form_encryption_keys (form_id, key_id, mode, hint, public_key, sealed, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (form_id, key_id) DO NOTHING`,
      [row.form_id, row.key_id, row.mode, row.hint, row.public_key, row.sealed === null ? null : JSON.stringify(row.sealed), row.created_by],
    );
  }

  async find(formId: number, keyId: string): Promise<FormKeyRow | null> {
    const rows: FormKeyRow[] = await this.db.query(`SELECT form_id, key_id, mode, hint, public_key, sealed, created_at FROM form_encryption_keys WHERE form_id = $1 AND key_id = $2`, [formId, keyId]);
    return rows[0] ?? null;
  }

  /** A key row whose version never came to be (the new version failed): removed again. */
  async removeUnused(formId: number, keyId: string, base64Spki: string): Promise<void> {
    await this.db.query(
      `DELETE FROM form_encryption_keys WHERE form_id = $1 AND key_id = $2
         AND NOT EXISTS (SELECT 1 FROM form_versions v WHERE v.form_id = $1 AND strpos(v.xml, $3) > 0)`,
      [formId, keyId, base64Spki],
    );
  }

  /** The oldest version of the form whose XForm carries `base64Spki`. */
  async firstVersionWith(formId: number, base64Spki: string): Promise<{ version: string; date_created: Date } | null> {
    const rows: Array<{ version: string; date_created: Date }> = await this.db.query(
      `SELECT version, date_created FROM form_versions WHERE form_id = $1 AND strpos(xml, $2) > 0 ORDER BY id LIMIT 1`,
      [formId, base64Spki],
    );
    return rows[0] ?? null;
  }
}
