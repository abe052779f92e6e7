import type { MigrationInterface, QueryRunner } from 'typeorm';

/** oidc-provider's stateful models, the signing keys and the failed-login log. */
export class Oidc1763900100000 implements MigrationInterface {
  name = 'Oidc1763900100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oidc_payloads (
        model varchar(40) NOT NULL,
        id varchar(255) NOT NULL,
        payload jsonb NOT NULL,
        grant_id varchar(255),
        user_code varchar(255),
        uid varchar(255),
        expires_at timestamptz,
        consumed_at timestamptz,
        PRIMARY KEY (model, id)
      )`);
    await q.query(`CREATE INDEX oidc_payloads_grant_id ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL`);
    await q.query(`CREATE INDEX oidc_payloads_uid ON oidc_payloads (model, uid) WHERE uid IS NOT NULL`);
    await q.query(`CREATE INDEX oidc_payloads_user_code ON oidc_payloads (model, user_code) WHERE user_code IS NOT NULL`);
    await q.query(`CREATE INDEX oidc_payloads_expires_at ON oidc_payloads (expires_at) WHERE expires_at IS NOT NULL`);
    await q.query(`
      CREATE TABLE cas_signing_keys (
        kid varchar(100) PRIMARY KEY,
        alg varchar(10) NOT NULL,
        public_jwk jsonb NOT NULL,
        private_key_enc text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz,
        publish_until timestamptz
      )`);
    await q.query(`
      CREATE TABLE cas_login_failures (
        id bigserial PRIMARY KEY,
        username varchar(150) NOT NULL,
        ip varchar(64) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX cas_login_failures_username ON cas_login_failures (username, created_at)`);
    await q.query(`CREATE INDEX cas_login_failures_ip ON cas_login_failures (ip, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS cas_login_failures`);
    await q.query(`DROP TABLE IF EXISTS cas_signing_keys`);
    await q.query(`DROP TABLE IF EXISTS oidc_payloads`);
  }
}
