import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keys of encrypted forms (docs/encryption.md "Keys and form versions"): one row per key pair a
 * form was given through the API, found by its key id (SHA-256 of the public key), which the
 * form versions carrying that public key share. `sealed` is the private key sealed under a
 * passphrase or ENCRYPTION_KEK (null in `self` mode, where the platform never had it).
 */
export class FormEncryptionKeys1765100600000 implements MigrationInterface {
  name = 'FormEncryptionKeys1765100600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE form_encryption_keys (
        id serial PRIMARY KEY,
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        key_id varchar(64) NOT NULL,
        mode varchar(16) NOT NULL CHECK (mode IN ('self', 'passphrase', 'server')),
        hint varchar(255),
        public_key text NOT NULL,
        sealed jsonb,
        created_by int REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (form_id, key_id),
        CHECK ((mode = 'self') = (sealed IS NULL))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS form_encryption_keys`);
  }
}
