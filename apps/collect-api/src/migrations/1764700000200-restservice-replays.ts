import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replay / back-fill of existing submissions to a rest service (docs/restservices.md,
 * "Replay"): the replay resource and the outbox rows it wrote (`replay_id`, so its progress is
 * a count over one index range). `upto` bounds the replay to the submissions that existed
 * when it was asked for; `cursor` is how far the outbox rows have been written (resumable).
 */
export class RestServiceReplays1764700000200 implements MigrationInterface {
  name = 'RestServiceReplays1764700000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rest_replays (
        id serial PRIMARY KEY,
        service_id int NOT NULL REFERENCES rest_services(id) ON DELETE CASCADE,
        status varchar(16) NOT NULL DEFAULT 'queued',
        filters jsonb NOT NULL DEFAULT '{}',
        total int NOT NULL,
        done int NOT NULL DEFAULT 0,
        failed int NOT NULL DEFAULT 0,
        upto int NOT NULL,
        cursor int NOT NULL DEFAULT 0,
        written boolean NOT NULL DEFAULT false,
        created_by int REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    await q.query(`CREATE INDEX rest_replays_service_idx ON rest_replays (service_id, id)`);
    await q.query(`CREATE INDEX rest_replays_unwritten_idx ON rest_replays (id) WHERE NOT written AND status IN ('queued', 'running')`);
    await q.query(`ALTER TABLE rest_deliveries ADD COLUMN replay_id int REFERENCES rest_replays(id) ON DELETE SET NULL`);
    await q.query(`CREATE INDEX rest_deliveries_replay_idx ON rest_deliveries (replay_id, status) WHERE replay_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_deliveries DROP COLUMN replay_id`);
    await q.query(`DROP TABLE rest_replays`);
  }
}
