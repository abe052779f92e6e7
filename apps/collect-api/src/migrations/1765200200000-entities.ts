import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Entities (docs/entities.md "The model"): lists per owner with their properties, the forms that
 * use each list, the entities with their current state, every version of each entity (what
 * conflicts and offline branches are computed from), and the updates held until the version
 * they build on arrives (docs/entities.md "Held updates").
 */
export class Entities1765200200000 implements MigrationInterface {
  name = 'Entities1765200200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE entity_lists (
        id serial PRIMARY KEY,
        owner_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        properties text[] NOT NULL DEFAULT '{}',
        revision bigint NOT NULL DEFAULT 0,
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now(),
        UNIQUE (owner_id, name)
      )`);
    await q.query(`
      CREATE TABLE entity_list_forms (
        list_id int NOT NULL REFERENCES entity_lists(id) ON DELETE CASCADE,
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        actions text[] NOT NULL DEFAULT '{}',
        save_to text[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (list_id, form_id)
      )`);
    await q.query(`CREATE INDEX entity_list_forms_form ON entity_list_forms (form_id)`);
    await q.query(`
      CREATE TABLE entities (
        id bigserial PRIMARY KEY,
        list_id int NOT NULL REFERENCES entity_lists(id) ON DELETE CASCADE,
        uuid uuid NOT NULL,
        label text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}',
        version int NOT NULL DEFAULT 1,
        conflict varchar(4) CHECK (conflict IN ('soft', 'hard')),
        creator_submission_id int REFERENCES submissions(id) ON DELETE SET NULL,
        creator_id int REFERENCES users(id) ON DELETE SET NULL,
        date_created timestamptz NOT NULL DEFAULT now(),
        date_modified timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz,
        UNIQUE (list_id, uuid)
      )`);
    await q.query(`CREATE INDEX entities_live ON entities (list_id, id) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX entities_deleted ON entities (list_id, id) WHERE deleted_at IS NOT NULL`);
    await q.query(`
      CREATE TABLE entity_versions (
        id bigserial PRIMARY KEY,
        entity_id bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        version int NOT NULL,
        label text NOT NULL,
        data jsonb NOT NULL,
        data_received jsonb NOT NULL,
        base_version int,
        trunk_version int,
        branch_id uuid,
        branch_base_version int,
        conflict varchar(4) CHECK (conflict IN ('soft', 'hard')),
        conflicting_properties text[],
        source varchar(16) NOT NULL CHECK (source IN ('submission', 'api')),
        submission_id int REFERENCES submissions(id) ON DELETE SET NULL,
        creator_id int REFERENCES users(id) ON DELETE SET NULL,
        date_created timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (entity_id, version)
      )`);
    await q.query(`CREATE INDEX entity_versions_branch ON entity_versions (entity_id, branch_id, branch_base_version) WHERE branch_id IS NOT NULL`);
    await q.query(`CREATE INDEX entity_versions_submission ON entity_versions (submission_id) WHERE submission_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE entity_held_updates (
        id bigserial PRIMARY KEY,
        list_id int NOT NULL REFERENCES entity_lists(id) ON DELETE CASCADE,
        submission_id int NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
        entity_uuid uuid NOT NULL,
        branch_id uuid NOT NULL,
        branch_base_version int NOT NULL,
        item jsonb NOT NULL,
        held_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX entity_held_next ON entity_held_updates (list_id, entity_uuid, branch_base_version)`);
    await q.query(`CREATE INDEX entity_held_age ON entity_held_updates (list_id, held_at)`);
    await q.query(`CREATE INDEX entity_held_submission ON entity_held_updates (submission_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS entity_held_updates, entity_versions, entities, entity_list_forms, entity_lists`);
  }
}
