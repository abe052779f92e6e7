import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a rest service does with encrypted submissions (docs/encryption.md "Forwarding"):
 * `skip`, `envelope` or `decrypted`; null is the default (decrypted for a form whose key the
 * server holds, skip otherwise).
 */
export class RestServiceEncryptedSubmissions1765200000001 implements MigrationInterface {
  name = 'RestServiceEncryptedSubmissions1765200000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_services ADD COLUMN encrypted_submissions varchar(16) CHECK (encrypted_submissions IN ('skip', 'envelope', 'decrypted'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_services DROP COLUMN encrypted_submissions`);
  }
}
