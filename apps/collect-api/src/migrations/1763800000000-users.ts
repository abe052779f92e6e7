import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Users1763800000000 implements MigrationInterface {
  name = 'Users1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS users (
        id serial PRIMARY KEY,
        username varchar(150) NOT NULL,
        email varchar(254) NOT NULL DEFAULT '',
        password_hash varchar(255),
        first_name varchar(150) NOT NULL DEFAULT '',
        last_name varchar(150) NOT NULL DEFAULT '',
        is_active boolean NOT NULL DEFAULT true,
        is_superuser boolean NOT NULL DEFAULT false,
        date_joined timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS users_username_lower_uq ON users (lower(username))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS users`);
  }
}
