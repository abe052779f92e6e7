import { sqlStateOf } from '@collect/platform';
import type { StatementEntity } from '../entities/intake/entity-statement.js';
import { attachedCte, attachedParams, type AttachmentReservation } from './submission-attachment-insert.js';
import type { SubmissionEntity, SubmissionRecord } from './submission.entity.js';

/** A new instance's row and what its insert re-checks (submissions.repository.ts, the checked insert). */
export type EntityInsertItem = {
  row: { formId: number; uuid: string; json: SubmissionRecord; jsonText?: string; xml: string; contentHash: string; submittedById: number; version: string };
  check: { version: string; superuser: boolean; roles: readonly string[] };
  entity: StatementEntity;
  /** The rows of its attachments, whose files are written already at these claimed paths (the statement `withAttachments`). */
  attachments?: AttachmentReservation[];
};

/**
 * `allowed` false: the cached form or role is stale (nothing written). `declined`: the statement
 * could not decide the entity work (or the instance exists): nothing written, intake's
 * transactional path decides. `held`: whether the entity the submission made or changed has
 * updates held for it, which are to be released (docs/entities.md, "Intake: one statement"):
 * read after the commit, while the next statement runs, and only when an update was held on the
 * entity's list after the statement's snapshot.
 */
export type EntityInsertResult = {
  allowed: boolean;
  declined: boolean;
  created: SubmissionEntity | null;
  queued: number;
  held: Promise<{ listId: number; uuid: string } | null>;
};

/**
 * The one statement of a new submission with entity work (docs/entities.md, "Intake: one
 * statement"): the submission row, the entity created or updated, its version, the list's
 * revision and the outbox rows of both, committed together, for several submissions at once
 * (group commit, as the plain one-statement insert). Each item does its entity work only when
 * this statement's snapshot shows it can be done exactly as the transactional path would (`fits`):
 * the list exists; the instance is new; a create's uuid is free; an update's entity is live at
 * the base version; no update is held for the entity; and the entity's advisory lock (the one the
 * transactional path takes) is free. Otherwise nothing of the item is written (`declined`).
 *
 * Under concurrency the statement stays correct by failing, never by guessing: the submission and
 * entity inserts have no ON CONFLICT, so a row another transaction wrote after this snapshot is a
 * unique violation and the statement writes nothing (the items go the transactional way); an
 * update re-checks the version on the row it locked (`e.version = base`, re-evaluated on the
 * newest row) and the submission row is inserted only when its update was made. Entity rows are
 * locked in id order (`locked`). The list's `revision` rises once per statement and list: the
 * hash changes whenever the list did (docs/entities.md, "The list's hash").
 *
 * `withAttachments`: the statement also writes the attachment rows of the submissions it inserts
 * (parameters $18 to $23, the items' files, written before at paths they claimed), which `outbox`
 * reads as `attached`. No ON CONFLICT: a row holding a claimed path fails the statement
 * (isEntityInsertRace) and nothing is stored.
 */
export function entityInsertSql(outbox: string, entityRows: string[], withAttachments = false): string {
  return `WITH input AS (
       SELECT ($1::int[])[i] AS form_id, ($2::varchar[])[i] AS uuid, ($3::jsonb)->(i - 1) AS json, ($4::text[])[i] AS xml, ($5::varchar[])[i] AS content_hash,
         ($6::int[])[i] AS submitted_by_id, ($7::varchar[])[i] AS version, ($8::varchar[])[i] AS check_version, ($9::boolean[])[i] AS superuser, ($10::text[])[i] AS roles,
         ($11::int[])[i] AS owner_id, ($12::varchar[])[i] AS list_name, ($13::uuid[])[i] AS entity_uuid, ($14::text[])[i] AS kind, ($15::text[])[i] AS label,
         ($16::jsonb)->(i - 1) AS data_in, ($17::int[])[i] AS base_version, i AS n
       FROM generate_subscripts($1::int[], 1) AS i
     ), target AS (
       SELECT i.n, l.id AS list_id, l.name AS list_name, l.held_seq,
         (SELECT COALESCE(jsonb_object_agg(p.key, p.value), '{}'::jsonb) FROM jsonb_each(i.data_in) p WHERE p.key = ANY(l.properties)) AS data,
         e.id AS entity_id, e.version AS entity_version, e.deleted_at AS entity_deleted_at
       FROM input i JOIN entity_lists l ON l.owner_id = i.owner_id AND l.name = i.list_name
         LEFT JOIN entities e ON e.list_id = l.id AND e.uuid = i.entity_uuid
     ), allowed AS (
       -- The existence tests are LIMIT 1 probes of their indexes: as NOT EXISTS over a batch they get a
       -- generic plan that hashes the whole submissions table on every call.
       SELECT i.*, t.list_id, t.list_name AS list_name_found, t.data, t.entity_id, t.held_seq,
         EXISTS (SELECT 1 FROM forms f WHERE f.id = i.form_id AND f.deleted_at IS NULL AND f.accepting_submissions AND f.version = i.check_version)
           AND (i.superuser OR EXISTS (SELECT 1 FROM form_roles r WHERE r.form_id = i.form_id AND r.user_id = i.submitted_by_id AND r.role = ANY(string_to_array(i.roles, ',')))) AS ok,
         t.list_id IS NOT NULL
           AND (SELECT 1 FROM submissions s WHERE s.form_id = i.form_id AND s.uuid = i.uuid LIMIT 1) IS NULL
           AND CASE WHEN i.kind = 'create' THEN t.entity_id IS NULL
             ELSE t.entity_id IS NOT NULL AND t.entity_deleted_at IS NULL AND t.entity_version = i.base_version END
           AND (SELECT 1 FROM entity_held_updates h WHERE h.list_id = t.list_id AND h.entity_uuid = i.entity_uuid LIMIT 1) IS NULL
           AND pg_try_advisory_xact_lock(t.list_id, hashtext(i.entity_uuid::text)) AS fits
       FROM input i LEFT JOIN target t ON t.n = i.n
     ), locked AS (
       SELECT e.id FROM entities e WHERE e.id IN (SELECT entity_id FROM allowed WHERE ok AND fits AND kind = 'update') ORDER BY e.id FOR UPDATE
     ), updated AS (
       UPDATE entities e SET label = COALESCE(a.label, e.label), data = e.data || a.data, version = e.version + 1, date_modified = clock_timestamp()
       FROM allowed a
       WHERE a.ok AND a.fits AND a.kind = 'update' AND e.id = a.entity_id AND e.id IN (SELECT id FROM locked)
         AND e.version = a.base_version AND e.deleted_at IS NULL
       RETURNING a.n, e.id, e.list_id, e.uuid, e.label, e.data, e.version, e.conflict, e.creator_submission_id, e.date_created, e.date_modified
     ), inserted AS (
       INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version)
       SELECT form_id, uuid, json, xml, content_hash, submitted_by_id, version FROM allowed a
       WHERE a.ok AND a.fits AND (a.kind = 'create' OR EXISTS (SELECT 1 FROM updated u WHERE u.n = a.n))
       ORDER BY form_id, uuid
       RETURNING *
     ),${withAttachments ? ` ${attachedCte(18, false)},` : ''} created AS (
       INSERT INTO entities (list_id, uuid, label, data, version, conflict, creator_submission_id, creator_id)
       SELECT a.list_id, a.entity_uuid, a.label, a.data, 1, NULL, ins.id, a.submitted_by_id
       FROM allowed a JOIN inserted ins ON ins.form_id = a.form_id AND ins.uuid = a.uuid
       WHERE a.kind = 'create'
       ORDER BY a.list_id, a.entity_uuid
       RETURNING id, list_id, uuid, label, data, version, conflict, creator_submission_id, date_created, date_modified
     ), changed AS (
       SELECT a.n, 'entity_created'::text AS event, c.id AS entity_id, c.list_id, a.list_name_found AS list_name, c.uuid, c.label, c.data, c.version, c.conflict,
         c.creator_submission_id, c.date_created, c.date_modified, ins.id AS submission_id, a.submitted_by_id AS creator_id,
         a.data || jsonb_build_object('label', a.label) AS data_received, NULL::int AS base_version
       FROM created c JOIN allowed a ON a.list_id = c.list_id AND a.entity_uuid = c.uuid AND a.kind = 'create'
         JOIN inserted ins ON ins.form_id = a.form_id AND ins.uuid = a.uuid
       UNION ALL
       SELECT a.n, 'entity_updated'::text, u.id, u.list_id, a.list_name_found, u.uuid, u.label, u.data, u.version, u.conflict,
         u.creator_submission_id, u.date_created, u.date_modified, ins.id, a.submitted_by_id,
         CASE WHEN a.label IS NULL THEN a.data ELSE a.data || jsonb_build_object('label', a.label) END, a.base_version
       FROM updated u JOIN allowed a ON a.n = u.n JOIN inserted ins ON ins.form_id = a.form_id AND ins.uuid = a.uuid
     ), versions AS (
       INSERT INTO entity_versions (entity_id, version, label, data, data_received, base_version, source, submission_id, creator_id)
       SELECT entity_id, version, label, data, data_received, base_version, 'submission', submission_id, creator_id FROM changed ORDER BY n
     ), revised AS (
       UPDATE entity_lists l SET revision = l.revision + 1, date_modified = now() WHERE l.id IN (SELECT list_id FROM changed)
       RETURNING l.id, l.held_seq
     ), queued AS (${outbox})${entityRows.map((sql, k) => `, queued_entities_${k} AS (${sql})`).join('')}
     SELECT a.form_id, a.uuid, a.ok, COALESCE(a.fits, false) AS fits, a.list_id, a.entity_uuid::text AS entity_uuid,
       ins.id, ins.status, ins.date_created, ins.date_modified, COALESCE(r.held_seq <> a.held_seq, false) AS held_moved,
       (SELECT count(*) FROM queued)::int${entityRows.map((_, k) => ` + (SELECT count(*) FROM queued_entities_${k})::int`).join('')} AS queued
     FROM allowed a LEFT JOIN inserted ins ON ins.form_id = a.form_id AND ins.uuid = a.uuid LEFT JOIN revised r ON r.id = a.list_id`;
}

/**
 * After the statement committed: which of the entities it made or changed have updates held for
 * them. The statement declined every entity with a held update its snapshot showed, and took the
 * entity's advisory lock, which a transaction holding an update for it keeps to its commit: a held
 * update it could miss was committed between its snapshot and that lock. Such a hold counted
 * itself on its list (`held_seq`) before that commit, and the statement's update of the list
 * returns the newest committed count: the read is made only for the lists whose count moved
 * (`held_moved`), and, made after the commit, sees the hold (docs/entities.md, "Intake: one
 * statement").
 */
export const HELD_AFTER_SQL = `SELECT DISTINCT h.list_id, h.entity_uuid::text AS entity_uuid FROM entity_held_updates h
  JOIN unnest($1::int[], $2::uuid[]) AS d(list_id, entity_uuid) ON h.list_id = d.list_id AND h.entity_uuid = d.entity_uuid`;

type Row = {
  form_id: number; uuid: string; ok: boolean; fits: boolean; list_id: number | null; entity_uuid: string; id: number | null; status: string;
  date_created: Date; date_modified: Date; held_moved: boolean; queued: number;
};

/**
 * Runs the statement for `items` (one result each, in order), and HELD_AFTER_SQL for the entities
 * it acted on in lists with a hold after its snapshot, which the results wait for but the group
 * commit does not: the next statement starts without it.
 */
export async function runEntityInsert(
  run: (text: string, values: unknown[]) => Promise<unknown>,
  items: EntityInsertItem[],
  text: string,
  withAttachments = false,
): Promise<EntityInsertResult[]> {
  const answers = (item: EntityInsertItem) => item.row.jsonText ?? JSON.stringify(item.row.json);
  const rows = (await run(text, [
    items.map((i) => i.row.formId), items.map((i) => i.row.uuid), `[${items.map(answers).join(',')}]`, items.map((i) => i.row.xml),
    items.map((i) => i.row.contentHash), items.map((i) => i.row.submittedById), items.map((i) => i.row.version), items.map((i) => i.check.version),
    items.map((i) => i.check.superuser), items.map((i) => i.check.roles.join(',')),
    items.map((i) => i.entity.ownerId), items.map((i) => i.entity.list), items.map((i) => i.entity.uuid), items.map((i) => i.entity.kind),
    items.map((i) => i.entity.label), JSON.stringify(items.map((i) => i.entity.data)), items.map((i) => i.entity.baseVersion),
    ...(withAttachments ? attachedParams(items) : []),
  ])) as Row[];
  const byKey = new Map(rows.map((r) => [`${r.form_id}/${r.uuid}`, r]));
  const done = rows.filter((r) => r.id !== null && r.held_moved);
  const held = done.length
    ? (run(HELD_AFTER_SQL, [done.map((r) => r.list_id), done.map((r) => r.entity_uuid)]) as Promise<Array<{ list_id: number; entity_uuid: string }>>)
      .then((found) => new Set(found.map((h) => `${h.list_id}/${h.entity_uuid}`)))
    : Promise.resolve(new Set<string>());
  // The outbox rows are counted over the whole statement: the first created row carries them (the caller only wakes the relay on it).
  let queued = rows[0]?.queued ?? 0;
  return items.map(({ row }) => {
    const r = byKey.get(`${row.formId}/${row.uuid}`)!;
    if (!r.ok) return { allowed: false, declined: false, created: null, queued: 0, held: Promise.resolve(null) };
    if (r.id === null) return { allowed: true, declined: true, created: null, queued: 0, held: Promise.resolve(null) };
    const created: SubmissionEntity = {
      formId: row.formId, uuid: row.uuid, json: row.json, xml: row.xml, contentHash: row.contentHash, submittedById: row.submittedById, version: row.version,
      id: r.id, status: r.status, edited: false, bambooDatasetId: '', dateCreated: r.date_created, dateModified: r.date_modified, deletedAt: null,
    };
    const mine = queued;
    queued = 0;
    const key = `${r.list_id}/${r.entity_uuid}`;
    return { allowed: true, declined: false, created, queued: mine, held: held.then((h) => (h.has(key) ? { listId: r.list_id!, uuid: r.entity_uuid } : null)) };
  });
}

/**
 * The statement wrote nothing because another transaction got there after its snapshot (a
 * unique index: the instance, the entity uuid or a claimed attachment path; the list deleted; a
 * deadlock between entity locks): the transactional path decides instead (docs/entities.md,
 * "Intake: one statement").
 */
export function isEntityInsertRace(err: unknown): boolean {
  const code = sqlStateOf(err);
  return code === '23505' || code === '23503' || code === '40P01';
}
