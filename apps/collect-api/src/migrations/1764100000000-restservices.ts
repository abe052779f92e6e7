import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rest services, their delivery outbox and the per-attempt delivery log (docs/restservices.md).
 * `rest_deliveries` is the outbox: a row is written in the submission's own transaction, so the
 * database, not Redis, is the source of truth for what still has to be sent.
 */
export class RestServices1764100000000 implements MigrationInterface {
  name = 'RestServices1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rest_services (
        id serial PRIMARY KEY,
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        name varchar(32) NOT NULL,
        service_url varchar(2000) NOT NULL,
        options jsonb NOT NULL DEFAULT '{}',
        auth_token_enc text,
        signing_secret_enc text,
        active boolean NOT NULL DEFAULT true,
        inactive_reason text,
        last_delivery_at timestamptz,
        last_status varchar(16),
        failure_count int NOT NULL DEFAULT 0,
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT rest_services_unique UNIQUE (form_id, name, service_url)
      )`);
    await q.query(`
      CREATE TABLE rest_deliveries (
        id bigserial PRIMARY KEY,
        delivery_id uuid NOT NULL UNIQUE,
        service_id int NOT NULL REFERENCES rest_services(id) ON DELETE CASCADE,
        submission_id int NOT NULL,
        event varchar(16) NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts int NOT NULL DEFAULT 0,
        -- attempts made before the last manual retry: the attempt limit counts from here.
        attempt_base int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now()
      )`);
    // The relay scans only unfinished rows; finished ones (the vast majority) stay out of the index.
    await q.query(`CREATE INDEX rest_deliveries_open_idx ON rest_deliveries (next_attempt_at) WHERE status IN ('pending', 'retrying', 'queued', 'sending')`);
    await q.query(`CREATE INDEX rest_deliveries_service_idx ON rest_deliveries (service_id, id)`);
    await q.query(`
      CREATE TABLE rest_delivery_attempts (
        id bigserial PRIMARY KEY,
        delivery_row_id bigint NOT NULL REFERENCES rest_deliveries(id) ON DELETE CASCADE,
        service_id int NOT NULL,
        attempt int NOT NULL,
        status varchar(16) NOT NULL,
        status_code int,
        latency_ms int,
        error text,
        response_excerpt text,
        event varchar(16) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX rest_delivery_attempts_service_idx ON rest_delivery_attempts (service_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS rest_delivery_attempts`);
    await q.query(`DROP TABLE IF EXISTS rest_deliveries`);
    await q.query(`DROP TABLE IF EXISTS rest_services`);
  }
}
