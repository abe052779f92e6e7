import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ClientsResources1763900000000 implements MigrationInterface {
  name = 'ClientsResources1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE cas_resources (
        name varchar(200) PRIMARY KEY,
        scopes text[] NOT NULL DEFAULT '{}',
        access_token_ttl integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE cas_clients (
        client_id varchar(200) PRIMARY KEY,
        secret_hash varchar(100),
        grant_types text[] NOT NULL DEFAULT '{}',
        response_types text[] NOT NULL DEFAULT '{}',
        scopes text[] NOT NULL DEFAULT '{}',
        resources text[] NOT NULL DEFAULT '{}',
        redirect_uris text[] NOT NULL DEFAULT '{}',
        post_logout_redirect_uris text[] NOT NULL DEFAULT '{}',
        token_endpoint_auth_method varchar(40) NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS cas_clients`);
    await q.query(`DROP TABLE IF EXISTS cas_resources`);
  }
}
