import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** Reads the decrypt export needs beyond the envelope store (docs/encryption.md "Decrypting without a server-held key"). */
@Injectable()
export class DecryptExportRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The keys a form's live envelopes were made for (keyId(), the SHA-256 of the public key). */
  async envelopeKeyIds(formId: number): Promise<string[]> {
    const rows: Array<{ key_id: string }> = await this.db.query(
      `SELECT DISTINCT e.key_id FROM submission_envelopes e JOIN submissions s ON s.id = e.submission_id
       WHERE e.form_id = $1 AND e.key_id IS NOT NULL AND s.deleted_at IS NULL`,
      [formId],
    );
    return rows.map((r) => r.key_id);
  }

  /** Live envelopes of the form (the export's row count). */
  async envelopeCount(formId: number): Promise<number> {
    const rows: Array<{ n: string }> = await this.db.query(
      `SELECT count(*) AS n FROM submission_envelopes e JOIN submissions s ON s.id = e.submission_id WHERE e.form_id = $1 AND s.deleted_at IS NULL`,
      [formId],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
