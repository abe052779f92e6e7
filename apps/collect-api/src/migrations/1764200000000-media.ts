import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Media listing and counts (docs/media.md).
 *
 * - `media_type_of(mimetype)`: the `type` filter's family (image/audio/video/document) as one
 *   immutable SQL function, so queries and the index below use the same expression.
 * - `attachments_form_type_live_idx`: `?xform=&type=` pages without scanning other types.
 * - `media_counts`: live attachment counts per form and type, kept by statement-level triggers
 *   on `attachments`, so `X-Total-Count` and `/media/count` cost a handful of rows instead of a
 *   scan of every attachment of the form. Rows are sharded by transaction id (16 shards per
 *   form): concurrent submissions to one form update different rows instead of queueing on
 *   one counter row (the lock that halved intake in 1764000000001). Each transaction touches
 *   one row per form, so two submissions cannot deadlock on counter rows.
 */
export class Media1764200000000 implements MigrationInterface {
  name = 'Media1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION media_type_of(mimetype text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN mimetype LIKE 'image/%' THEN 'image'
          WHEN mimetype LIKE 'audio/%' THEN 'audio'
          WHEN mimetype LIKE 'video/%' THEN 'video'
          ELSE 'document' END
      $$`);
    await q.query(`CREATE INDEX attachments_form_type_live_idx ON attachments (form_id, media_type_of(mimetype), id) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX attachments_live_id_idx ON attachments (id) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE media_counts (
        form_id int NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        shard smallint NOT NULL,
        image bigint NOT NULL DEFAULT 0,
        audio bigint NOT NULL DEFAULT 0,
        video bigint NOT NULL DEFAULT 0,
        document bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (form_id, shard)
      )`);
    // One function for the three triggers: +1 for live rows entering, -1 for live rows leaving
    // (soft delete, an edit hiding a file, hard delete).
    const upsert = (source: string) => `
      INSERT INTO media_counts AS c (form_id, shard, image, audio, video, document)
        SELECT form_id, (txid_current() % 16)::smallint,
               COALESCE(sum(delta) FILTER (WHERE media_type_of(mimetype) = 'image'), 0),
               COALESCE(sum(delta) FILTER (WHERE media_type_of(mimetype) = 'audio'), 0),
               COALESCE(sum(delta) FILTER (WHERE media_type_of(mimetype) = 'video'), 0),
               COALESCE(sum(delta) FILTER (WHERE media_type_of(mimetype) = 'document'), 0)
        FROM (${source}) d GROUP BY form_id
        ORDER BY form_id
      ON CONFLICT (form_id, shard) DO UPDATE SET
        image = c.image + EXCLUDED.image, audio = c.audio + EXCLUDED.audio,
        video = c.video + EXCLUDED.video, document = c.document + EXCLUDED.document;`;
    const entering = `SELECT form_id, mimetype, 1 AS delta FROM media_new WHERE deleted_at IS NULL`;
    const leaving = `SELECT form_id, mimetype, -1 AS delta FROM media_old WHERE deleted_at IS NULL`;
    // Updates that change neither liveness, form nor type (most do not) write nothing.
    const changed = `SELECT n.form_id, n.mimetype, 1 AS delta FROM media_new n JOIN media_old o ON o.id = n.id
                       WHERE n.deleted_at IS NULL AND (o.deleted_at IS NOT NULL OR o.form_id <> n.form_id OR o.mimetype <> n.mimetype)
                     UNION ALL
                     SELECT o.form_id, o.mimetype, -1 FROM media_old o JOIN media_new n ON n.id = o.id
                       WHERE o.deleted_at IS NULL AND (n.deleted_at IS NOT NULL OR o.form_id <> n.form_id OR o.mimetype <> n.mimetype)`;
    await q.query(`
      CREATE FUNCTION media_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN ${upsert(entering)}
        ELSIF TG_OP = 'UPDATE' THEN ${upsert(changed)}
        ELSE ${upsert(leaving)}
        END IF;
        RETURN NULL;
      END
      $fn$`);
    await q.query(`CREATE TRIGGER media_counts_ins AFTER INSERT ON attachments REFERENCING NEW TABLE AS media_new FOR EACH STATEMENT EXECUTE FUNCTION media_counts_apply()`);
    await q.query(`CREATE TRIGGER media_counts_upd AFTER UPDATE ON attachments REFERENCING OLD TABLE AS media_old NEW TABLE AS media_new FOR EACH STATEMENT EXECUTE FUNCTION media_counts_apply()`);
    await q.query(`CREATE TRIGGER media_counts_del AFTER DELETE ON attachments REFERENCING OLD TABLE AS media_old FOR EACH STATEMENT EXECUTE FUNCTION media_counts_apply()`);
    await q.query(`
      INSERT INTO media_counts (form_id, shard, image, audio, video, document)
        SELECT form_id, 0,
               count(*) FILTER (WHERE media_type_of(mimetype) = 'image'),
               count(*) FILTER (WHERE media_type_of(mimetype) = 'audio'),
               count(*) FILTER (WHERE media_type_of(mimetype) = 'video'),
               count(*) FILTER (WHERE media_type_of(mimetype) = 'document')
        FROM attachments WHERE deleted_at IS NULL GROUP BY form_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['media_counts_ins', 'media_counts_upd', 'media_counts_del']) await q.query(`DROP TRIGGER IF EXISTS ${t} ON attachments`);
    await q.query(`DROP FUNCTION IF EXISTS media_counts_apply()`);
    await q.query(`DROP TABLE IF EXISTS media_counts`);
    await q.query(`DROP INDEX IF EXISTS attachments_live_id_idx`);
    await q.query(`DROP INDEX IF EXISTS attachments_form_type_live_idx`);
    await q.query(`DROP FUNCTION IF EXISTS media_type_of(text)`);
  }
}
