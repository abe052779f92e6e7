import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type EntityManager, type Repository } from 'typeorm';
import { preparedQuery, preparedQueryIn } from '../database/prepared-query.js';
import { StatementBatches } from '../database/statement-batches.js';
import { AttachmentEntity, SubmissionEntity, type SubmissionRecord } from './submission.entity.js';

/** A new instance's row as the intake's checked insert writes it. */
type InstanceRow = { formId: number; uuid: string; json: SubmissionRecord; xml: string; contentHash: string; submittedById: number; version: string };
/** What the checked insert re-checks against the database: the cached form version and role. */
type InstanceCheck = { version: string; superuser: boolean; roles: readonly string[] };
/**
 * `allowed` false: nothing written, the cached view was stale. `queued`: the outbox rows the
 * statement wrote; a grouped statement counts them once, on its first created row (a count > 0
 * wakes the relay, once is enough).
 */
type CheckedInsert = { allowed: boolean; created: SubmissionEntity | null; queued: number; reserved?: Set<string> };
/** An attachment row the transactional checked insert reserves for the new instance (its storage path, unique). */
export type AttachmentReservation = Pick<AttachmentEntity, 'filename' | 'name' | 'mimetype' | 'size' | 'fieldXpath'>;

/**
 * Group commit of the one-statement intake: while BATCHES.maxInFlight statements run (each on a
 * pool connection of its own), further submissions wait and go together in the next one, at
 * most maxItems rows (bounds the statement's parameters and the time one batch holds its row locks).
 */
const BATCHES = { maxInFlight: 2, maxItems: 64 };

/** Queries on `submissions` and `attachments`. Write paths take the transaction's EntityManager. */
@Injectable()
export class SubmissionsRepository {
  /** Group commit of the one-statement intake, per outbox statement (in practice one). */
  private readonly batches = new Map<string, StatementBatches<{ row: InstanceRow; check: InstanceCheck }, CheckedInsert>>();

  constructor(
    @InjectRepository(SubmissionEntity) private readonly submissions: Repository<SubmissionEntity>,
    @InjectRepository(AttachmentEntity) private readonly attachments: Repository<AttachmentEntity>,
  ) {}

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.submissions.manager.transaction(work);
  }

  findLive(formId: number, id: number): Promise<SubmissionEntity | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return Promise.resolve(null);
    return this.submissions.findOneBy({ formId, id, deletedAt: IsNull() });
  }

  /** Among `formIds`, the form the user submitted to last (deleted submissions count), or null. */
  async lastFormSubmittedTo(userId: number, formIds: number[]): Promise<number | null> {
    if (!formIds.length) return null;
    const rows: Array<{ form_id: number }> = await this.submissions.manager.query(
      `SELECT form_id FROM submissions WHERE submitted_by_id = $1 AND form_id = ANY($2) ORDER BY id DESC LIMIT 1`,
      [userId, formIds],
    );
    return rows[0]?.form_id ?? null;
  }

  findAny(id: number): Promise<SubmissionEntity | null> {
    return this.submissions.findOneBy({ id });
  }

  /** Any submission (also deleted) with that instanceID, locked for the rest of the transaction. */
  findByUuidForUpdate(m: EntityManager, formId: number, uuid: string): Promise<SubmissionEntity | null> {
    return m.getRepository(SubmissionEntity).createQueryBuilder('s').setLock('pessimistic_write').where('s.form_id = :formId AND s.uuid = :uuid', { formId, uuid }).getOne();
  }

  /**
   * The intake's one statement for a new instance: inserts the row unless (form, uuid) exists,
   * and only while the form is live, accepting, still at `check.version`, and the user still
   * holds one of `check.roles` on it (or is a platform admin). The caller's form and role come
   * from a cache (FormCache); this is where they are checked against the database, in the same
   * round trip. `allowed` false: nothing written, the cached view was stale. Plain objects, no
   * entity hydration (docs/benchmarks.md, issue 20).
   */
  async insertChecked(m: EntityManager, row: InstanceRow, check: InstanceCheck): Promise<CheckedInsert> {
    const [result] = await runInsertChecked((text, values) => preparedQueryIn(m, text, values), [{ row, check }]);
    return result!;
  }

  /**
   * `insertChecked` that, when it inserts the instance, also reserves its attachment rows in the
   * same statement (as `reserveAttachment` does, ON CONFLICT DO NOTHING): one round trip fewer
   * per OpenRosa submission with attachments (docs/benchmarks.md, "OpenRosa and soak (issue 20,
   * session 6)"). `reserved`: the storage paths reserved; a path taken already is not, and the
   * caller reserves that file again under another name.
   */
  async insertCheckedWithAttachments(m: EntityManager, row: InstanceRow, check: InstanceCheck, attachments: AttachmentReservation[]): Promise<CheckedInsert & { reserved: Set<string> }> {
    const [result] = await runInsertChecked((text, values) => preparedQueryIn(m, text, values), [{ row, check }], undefined, attachments);
    return { ...result!, reserved: result!.reserved ?? new Set() };
  }

  /**
   * `insertChecked` as a statement of its own, outside any transaction (it commits alone), that
   * also writes the new row's outbox rows (`outboxSql`, SubmissionOutbox.createdRowsSql): the
   * one-statement intake. Concurrent calls are grouped into one multi-row statement
   * (StatementBatches: group commit), each row with its own checks, its own duplicate test and
   * its own outbox rows, each caller with its own answer (docs/forms.md, "Intake: caches and one
   * statement"). Its text is fixed, so it runs as a named prepared statement: planning this CTE
   * on every call cost PostgreSQL more than executing it (docs/benchmarks.md, "CPU per request").
   */
  insertCheckedAlone(row: InstanceRow, check: InstanceCheck, outboxSql: (inserted: string) => string): Promise<CheckedInsert> {
    const outbox = outboxSql('inserted');
    let batches = this.batches.get(outbox);
    if (!batches) {
      const db = this.submissions.manager.connection;
      batches = new StatementBatches(
        (items: Array<{ row: InstanceRow; check: InstanceCheck }>) => runInsertChecked((text, values) => preparedQuery(db, text, values), items, outbox),
        (item) => `${item.row.formId}/${item.row.uuid}`,
        BATCHES,
      );
      this.batches.set(outbox, batches);
    }
    return batches.submit({ row, check });
  }

  async replaceContent(m: EntityManager, id: number, changes: Pick<SubmissionEntity, 'uuid' | 'json' | 'xml' | 'contentHash' | 'version'>): Promise<SubmissionEntity> {
    await m.getRepository(SubmissionEntity).update({ id }, { ...changes, edited: true, dateModified: new Date() } as never);
    return m.getRepository(SubmissionEntity).findOneByOrFail({ id });
  }

  async softDelete(m: EntityManager, id: number, at: Date): Promise<void> {
    await m.getRepository(SubmissionEntity).update({ id }, { deletedAt: at });
    await m.getRepository(AttachmentEntity).update({ submissionId: id, deletedAt: IsNull() }, { deletedAt: at });
  }

  /** Not an edit of the answers: no event, `date_modified` unchanged. */
  async setBambooDatasetId(id: number, datasetId: string): Promise<void> {
    await this.submissions.query(`UPDATE submissions SET bamboo_dataset_id = $2 WHERE id = $1 AND bamboo_dataset_id IS DISTINCT FROM $2`, [id, datasetId.slice(0, 100)]);
  }

  liveAttachmentsOf(submissionIds: number[], m?: EntityManager): Promise<AttachmentEntity[]> {
    if (!submissionIds.length) return Promise.resolve([]);
    const repo = m ? m.getRepository(AttachmentEntity) : this.attachments;
    return repo.find({ where: { submissionId: In(submissionIds), deletedAt: IsNull() }, order: { id: 'ASC' } });
  }

  /**
   * Inserts the attachment row unless its filename is taken (unique index); false then. A
   * concurrent uncommitted row with the same filename makes this wait for that transaction.
   */
  async reserveAttachment(m: EntityManager, row: Pick<AttachmentEntity, 'submissionId' | 'formId' | 'filename' | 'name' | 'mimetype' | 'size' | 'fieldXpath'>): Promise<boolean> {
    const rows = await preparedQueryIn(
      m,
      `INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT DO NOTHING RETURNING id`,
      [row.submissionId, row.formId, row.filename, row.name, row.mimetype, row.size, row.fieldXpath],
    );
    return rows.length > 0;
  }

  async hideAttachments(m: EntityManager, ids: number[]): Promise<void> {
    if (ids.length) await m.getRepository(AttachmentEntity).update({ id: In(ids) }, { deletedAt: new Date() });
  }

  async usernames(ids: Array<number | null>): Promise<Map<number, string>> {
    const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
    if (!wanted.length) return new Map();
    const rows = (await this.submissions.manager.query(`SELECT id, username FROM users WHERE id = ANY($1)`, [wanted])) as Array<{ id: number; username: string }>;
    return new Map(rows.map((r) => [r.id, r.username]));
  }
}

/**
 * The checked insert of `items` (one or many) as ONE statement: the rows come as one array
 * parameter per column (the answers as one jsonb array: no array quoting of their JSON text), read
 * by index over `generate_subscripts`, whose row estimate does not depend on the parameter, so
 * the prepared statement keeps one generic plan (with `unnest` PostgreSQL planned it again on
 * every call: 550 µs, more than executing it). Each row checked on its own
 * against the live form and role (`ok`), inserted unless its (form, uuid) exists (ON CONFLICT),
 * with `outbox` (a CTE reading `inserted`) writing the outbox rows of the rows inserted. Rows are
 * inserted in (form, uuid) order, so two such statements in different processes take their
 * unique-index entries in the same order (no deadlock between them). One result per item, in order.
 */
async function runInsertChecked(
  run: (text: string, values: unknown[]) => Promise<unknown>,
  items: Array<{ row: InstanceRow; check: InstanceCheck }>,
  outbox?: string,
  attachments?: AttachmentReservation[],
): Promise<CheckedInsert[]> {
  // Attachment rows of a single item (the transactional path), read by index as the rows are.
  if (attachments && items.length !== 1) throw new Error('attachment rows go with one instance');
  const attached = attachments
    ? `, attached AS (
       INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath)
       SELECT ins.id, ins.form_id, ($11::varchar[])[j], ($12::varchar[])[j], ($13::varchar[])[j], ($14::bigint[])[j], ($15::varchar[])[j]
       FROM inserted ins CROSS JOIN generate_subscripts($11::varchar[], 1) AS j
       ON CONFLICT DO NOTHING
       RETURNING filename
     )`
    : '';
  const column = <T>(f: (item: { row: InstanceRow; check: InstanceCheck }) => T): T[] => items.map(f);
  const rows = (await run(
    `WITH input AS (
       SELECT ($1::int[])[i] AS form_id, ($2::varchar[])[i] AS uuid, ($3::jsonb)->(i - 1) AS json, ($4::text[])[i] AS xml, ($5::varchar[])[i] AS content_hash,
         ($6::int[])[i] AS submitted_by_id, ($7::varchar[])[i] AS version, ($8::varchar[])[i] AS check_version, ($9::boolean[])[i] AS superuser, ($10::text[])[i] AS roles
       FROM generate_subscripts($1::int[], 1) AS i
     ), allowed AS (
       SELECT i.*, EXISTS (SELECT 1 FROM forms f WHERE f.id = i.form_id AND f.deleted_at IS NULL AND f.accepting_submissions AND f.version = i.check_version)
         AND (i.superuser OR EXISTS (SELECT 1 FROM form_roles r WHERE r.form_id = i.form_id AND r.user_id = i.submitted_by_id AND r.role = ANY(string_to_array(i.roles, ',')))) AS ok
       FROM input i
     ), inserted AS (
       INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version)
       SELECT form_id, uuid, json, xml, content_hash, submitted_by_id, version FROM allowed WHERE ok ORDER BY form_id, uuid
       ON CONFLICT (form_id, uuid) DO NOTHING
       RETURNING *
     )${outbox ? `, queued AS (${outbox})` : ''}${attached}
     SELECT a.form_id, a.uuid, a.ok, ins.id, ins.status, ins.date_created, ins.date_modified,
       ${outbox ? '(SELECT count(*) FROM queued)::int' : '0'} AS queued${attachments ? ', ARRAY(SELECT filename FROM attached) AS attached' : ''}
     FROM allowed a LEFT JOIN inserted ins ON ins.form_id = a.form_id AND ins.uuid = a.uuid`,
    [
      column((i) => i.row.formId), column((i) => i.row.uuid), `[${column((i) => JSON.stringify(i.row.json)).join(',')}]`, column((i) => i.row.xml),
      column((i) => i.row.contentHash), column((i) => i.row.submittedById), column((i) => i.row.version), column((i) => i.check.version),
      column((i) => i.check.superuser), column((i) => i.check.roles.join(',')),
      ...(attachments
        ? [attachments.map((a) => a.filename), attachments.map((a) => a.name), attachments.map((a) => a.mimetype), attachments.map((a) => a.size), attachments.map((a) => a.fieldXpath)]
        : []),
    ],
  )) as Array<{ form_id: number; uuid: string; ok: boolean; id: number | null; status: string; date_created: Date; date_modified: Date; queued: number; attached?: string[] }>;
  const byKey = new Map(rows.map((r) => [`${r.form_id}/${r.uuid}`, r]));
  // The outbox rows are counted over the whole statement: the first created row carries them (the caller only wakes the relay on it).
  let queued = rows[0]?.queued ?? 0;
  return items.map(({ row }) => {
    const r = byKey.get(`${row.formId}/${row.uuid}`)!;
    if (!r.ok || r.id === null) return { allowed: r.ok, created: null, queued: 0 };
    const created: SubmissionEntity = {
      ...row, id: r.id, status: r.status, edited: false, bambooDatasetId: '', dateCreated: r.date_created, dateModified: r.date_modified, deletedAt: null,
    };
    const mine = queued;
    queued = 0;
    return { allowed: true, created, queued: mine, ...(r.attached ? { reserved: new Set(r.attached) } : {}) };
  });
}
