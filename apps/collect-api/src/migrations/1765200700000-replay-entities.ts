import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A replay also sends the entities of the lists its service's form uses, as `entity_created`
 * (docs/restservices.md, "Replay / back-fill"): the newest entity that existed when it was asked
 * for (`entity_upto`) and the last one given an outbox row (`entity_cursor`), beside the
 * submissions' `upto` and `cursor`. Replays from before have 0: no entities. Adding columns with
 * a constant default rewrites no rows.
 */
export class ReplayEntities1765200700000 implements MigrationInterface {
  name = 'ReplayEntities1765200700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_replays ADD COLUMN entity_upto bigint NOT NULL DEFAULT 0, ADD COLUMN entity_cursor bigint NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rest_replays DROP COLUMN IF EXISTS entity_upto, DROP COLUMN IF EXISTS entity_cursor`);
  }
}
