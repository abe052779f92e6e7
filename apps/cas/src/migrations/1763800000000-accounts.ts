import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Accounts1763800000000 implements MigrationInterface {
  name = 'Accounts1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS cas_accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        username varchar(150) NOT NULL UNIQUE,
        email varchar(254) NOT NULL DEFAULT '',
        given_name varchar(150) NOT NULL DEFAULT '',
        family_name varchar(150) NOT NULL DEFAULT '',
        password_hash varchar(255),
        enabled boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS cas_accounts`);
  }
}
