import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A list's count of updates ever held for its entities (docs/entities.md, "Intake: one
 * statement"): intake's one statement compares the value its snapshot read with the one its list
 * update returns, and looks for held updates after its commit only when a hold committed in
 * between. Adding a column with a constant default rewrites no rows.
 */
export class EntityListHeldSeq1765200600000 implements MigrationInterface {
  name = 'EntityListHeldSeq1765200600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE entity_lists ADD COLUMN held_seq bigint NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE entity_lists DROP COLUMN IF EXISTS held_seq`);
  }
}
