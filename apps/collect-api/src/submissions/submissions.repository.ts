import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type EntityManager, type Repository } from 'typeorm';
import { preparedQuery, preparedQueryIn } from '../database/prepared-query.js';
import { StatementBatches } from '../database/statement-batches.js';
import { AttachmentEntity, SubmissionEntity, type SubmissionRecord } from './submission.entity.js';
import { attachedCte, attachedParams, type AttachmentReservation } from './submission-attachment-insert.js';
import { runEntityInsert, type EntityInsertItem, type EntityInsertResult } from './submission-entity-insert.js';
import { envelopeCtes, envelopeParams, type EnvelopeStatementRow } from './submission-envelope-insert.js';

/** A new instance's row as the intake's checked insert writes it. */
/** `jsonText`: the answers' JSON when the caller wrote it already (intake's canonical JSON; any key order stores the same jsonb). */
type InstanceRow = { formId: number; uuid: string; json: SubmissionRecord; jsonText?: string; xml: string; contentHash: string; submittedById: number; version: string };
/** What the checked insert re-checks against the database: the cached form version and role. */
type InstanceCheck = { version: string; superuser: boolean; roles: readonly string[] };
/**
 * `allowed` false: nothing written, the cached view was stale. `queued`: the outbox rows the
 * statement wrote; a grouped statement counts them once, on its first created row (a count > 0
 * wakes the relay, once is enough).
 */
type CheckedInsert = { allowed: boolean; created: SubmissionEntity | null; queued: number; reserved?: Set<string> };
export type { AttachmentReservation };
/** One row of the checked insert: the instance, its checks, (a new OpenRosa instance) its attachment rows and (an encrypted one) its envelope row. */
type InsertItem = { row: InstanceRow; check: InstanceCheck; attachments?: AttachmentReservation[]; envelope?: EnvelopeStatementRow };
/** SubmissionOutbox.createdRowsSql: the outbox CTE of the one-statement insert, reading `inserted` (and `attached`). */
type OutboxSql = (inserted: string, attached?: string) => string;

/**
 * Group commit of the one-statement intake: while a statement runs, further submissions wait and
 * go together in the next one, at most maxItems rows (bounds the statement's parameters and the
 * time one batch holds its row locks). A second statement (a pool connection of its own) starts
 * only when the one on its way has run spareAfterMs: a second lane at once took the submissions
 * one by one under a steady load, and a row of a one-row statement cost PostgreSQL about twice a
 * row of a batch (docs/forms.md, "Intake: caches and one statement"). The first statement
 * waits for the end of the event-loop turn (gatherTurn), so the requests one turn read go in it
 * together (docs/forms.md, "Intake: caches and one statement").
 */
const BATCHES = { maxInFlight: 2, maxItems: 64, spareAfterMs: 5, gatherTurn: true };

/** Queries on `submissions` and `attachments`. Write paths take the transaction's EntityManager. */
@Injectable()
export class SubmissionsRepository {
  /** Group commit of the one-statement intake, per outbox statement (in practice one). */
  private readonly batches = new Map<string, StatementBatches<InsertItem, CheckedInsert>>();
  /**
   * The same by the caller's `outboxSql` function (with, without attachment rows): a caller that
   * passes the same function each time gets its batches without its SQL being written and
   * looked up again per submission (a fresh string of kilobytes is hashed on every lookup).
   */
  private readonly batchesByFunction = {
    plain: new WeakMap<OutboxSql, StatementBatches<InsertItem, CheckedInsert>>(),
    attachments: new WeakMap<OutboxSql, StatementBatches<InsertItem, CheckedInsert>>(),
    envelope: new WeakMap<OutboxSql, StatementBatches<InsertItem, CheckedInsert>>(),
    envelopeKept: new WeakMap<OutboxSql, StatementBatches<InsertItem, CheckedInsert>>(),
  };

  /** Group commit of the one statement of submissions with entity work (its text written on first use: the sinks register at start). */
  private entityBatches: StatementBatches<EntityInsertItem, EntityInsertResult> | null = null;
  private entityFilesBatches: StatementBatches<EntityInsertItem, EntityInsertResult> | null = null;

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
   * entity hydration (docs/forms.md, "Intake: caches and one statement").
   */
  async insertChecked(m: EntityManager, row: InstanceRow, check: InstanceCheck): Promise<CheckedInsert> {
    const [result] = await runInsertChecked((text, values) => preparedQueryIn(m, text, values), [{ row, check }], CHECKED_TEXTS.plain);
    return result!;
  }

  /**
   * `insertChecked` that, when it inserts the instance, also reserves its attachment rows in the
   * same statement (as `reserveAttachment` does, ON CONFLICT DO NOTHING): one round trip fewer
   * per OpenRosa submission with attachments (docs/forms.md, "Intake: caches and one
   * statement"). `reserved`: the storage paths reserved; a path taken already is not, and the
   * caller reserves that file again under another name.
   */
  async insertCheckedWithAttachments(m: EntityManager, row: InstanceRow, check: InstanceCheck, attachments: AttachmentReservation[]): Promise<CheckedInsert & { reserved: Set<string> }> {
    const [result] = await runInsertChecked((text, values) => preparedQueryIn(m, text, values), [{ row, check, attachments }], CHECKED_TEXTS.reserve);
    return { ...result!, reserved: result!.reserved ?? new Set() };
  }

  /**
   * `insertChecked` as a statement of its own, outside any transaction (it commits alone), that
   * also writes the new row's outbox rows (`outboxSql`, SubmissionOutbox.createdRowsSql): the
   * one-statement intake. Concurrent calls are grouped into one multi-row statement
   * (StatementBatches: group commit), each row with its own checks, its own duplicate test and
   * its own outbox rows, each caller with its own answer (docs/forms.md, "Intake: caches and one
   * statement"). Its text is fixed, so it runs as a named prepared statement: planning this CTE
   * on every call cost PostgreSQL more than executing it (docs/benchmarks.md, "cpu-per-request").
   */
  insertCheckedAlone(row: InstanceRow, check: InstanceCheck, outboxSql: OutboxSql): Promise<CheckedInsert> {
    return this.batchesFor(outboxSql, 'plain').submit({ row, check });
  }

  /**
   * `insertCheckedAlone` of a new OpenRosa instance whose attachment files are written already,
   * each at a storage path it claimed (FileStorage.putBytesIfAbsent): the same statement also
   * inserts their attachment rows, and its outbox rows see them (`outboxSql`'s `attached`). The
   * row, its attachments and its outbox rows commit together or not at all: a path whose row
   * exists already (its file was removed by hand) fails the statement (unique violation,
   * `isAttachmentPathTaken`) and nothing is stored (docs/forms.md, "Intake: caches and one statement").
   */
  insertCheckedAloneWithAttachments(
    row: InstanceRow, check: InstanceCheck, attachments: AttachmentReservation[], outboxSql: OutboxSql,
  ): Promise<CheckedInsert> {
    return this.batchesFor(outboxSql, 'attachments').submit({ row, check, attachments });
  }

  /**
   * `insertCheckedAloneWithAttachments` of a new encrypted instance: the same statement also
   * writes its envelope row and (decrypted on receipt) the hidden attachment rows of its kept
   * `.enc` parts, their files written already (submission-envelope-insert.ts; docs/encryption.md,
   * "How an envelope is stored"). `created`: the envelope is recorded too.
   */
  insertCheckedAloneWithEnvelope(
    row: InstanceRow, check: InstanceCheck, attachments: AttachmentReservation[], envelope: EnvelopeStatementRow, outboxSql: OutboxSql,
  ): Promise<CheckedInsert> {
    return this.batchesFor(outboxSql, envelope.kept.length ? 'envelopeKept' : 'envelope').submit({ row, check, attachments, envelope });
  }

  /**
   * The one statement of a new submission whose entity work it can do (docs/entities.md, "Intake:
   * one statement"; submission-entity-insert.ts), group-committed as `insertCheckedAlone`.
   * `text`: the statement's text, asked for once.
   */
  insertCheckedAloneWithEntity(item: EntityInsertItem, text: () => string): Promise<EntityInsertResult> {
    // With attachment rows, another statement text (entityInsertSql `withAttachments`), batched apart.
    const withAttachments = item.attachments !== undefined;
    let batches = withAttachments ? this.entityFilesBatches : this.entityBatches;
    if (!batches) {
      const db = this.submissions.manager.connection;
      const sql = text();
      batches = new StatementBatches(
        (items: EntityInsertItem[]) => runEntityInsert((t, values) => preparedQuery(db, t, values), items, sql, withAttachments),
        (i) => `${i.row.formId}/${i.row.uuid}`,
        BATCHES,
      );
      if (withAttachments) this.entityFilesBatches = batches;
      else this.entityBatches = batches;
    }
    return batches.submit(item);
  }

  /** The group commit of one statement text (per outbox statement; without attachment rows, with them, with them and an envelope row, with those and kept parts' rows). */
  private batchesFor(outboxSql: OutboxSql, kind: keyof SubmissionsRepository['batchesByFunction']): StatementBatches<InsertItem, CheckedInsert> {
    const byFunction = this.batchesByFunction[kind];
    const known = byFunction.get(outboxSql);
    if (known) return known;
    const outbox = kind === 'plain' ? outboxSql('inserted') : outboxSql('inserted', 'attached');
    const key = `${kind}\n${outbox}`;
    let batches = this.batches.get(key);
    if (!batches) {
      const db = this.submissions.manager.connection;
      const texts = insertCheckedTexts({ outbox, attachments: kind === 'plain' ? undefined : 'insert', envelopes: kind === 'envelope' ? 'row' : kind === 'envelopeKept' ? 'kept' : undefined });
      batches = new StatementBatches(
        (items: InsertItem[]) => runInsertChecked((text, values) => preparedQuery(db, text, values), items, texts),
        (item) => `${item.row.formId}/${item.row.uuid}`,
        BATCHES,
      );
      this.batches.set(key, batches);
    }
    byFunction.set(outboxSql, batches);
    return batches;
  }

  async replaceContent(m: EntityManager, id: number, changes: Pick<SubmissionEntity, 'uuid' | 'json' | 'xml' | 'contentHash' | 'version'>): Promise<SubmissionEntity> {
    await m.getRepository(SubmissionEntity).update({ id }, { ...changes, edited: true, dateModified: new Date() } as never);
    return m.getRepository(SubmissionEntity).findOneByOrFail({ id });
  }

  async softDelete(m: EntityManager, id: number, at: Date): Promise<void> {
    await m.getRepository(SubmissionEntity).update({ id }, { deletedAt: at });
    await m.getRepository(AttachmentEntity).update({ submissionId: id, deletedAt: IsNull() }, { deletedAt: at });
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

  /** Gives back a row `reserveAttachment` took in this transaction (its path's file is another submission's). */
  async releaseAttachment(m: EntityManager, submissionId: number, filename: string): Promise<void> {
    await preparedQueryIn(m, `DELETE FROM attachments WHERE submission_id = $1 AND filename = $2`, [submissionId, filename]);
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

/** `envelopes`: the envelope rows (`row`), and with them the hidden rows of kept parts (`kept`): submission-envelope-insert.ts. */
type InsertCheckedOptions = { outbox?: string; attachments?: 'reserve' | 'insert'; envelopes?: 'row' | 'kept' };
/** The checked insert's statement texts for one set of options: one row, several rows. */
type InsertCheckedTexts = { options: InsertCheckedOptions; single: string; multi: string };

/**
 * The texts of runInsertChecked, written once per set of options: the same string object on
 * every call, so neither the prepared statement's name lookup (database/prepared-query.ts) nor
 * the driver's check against the text it prepared reads kilobytes of SQL per submission.
 */
function insertCheckedTexts(options: InsertCheckedOptions): InsertCheckedTexts {
  return { options, single: insertCheckedSql(true, options), multi: insertCheckedSql(false, options) };
}

/** The transactional path's texts (one row each; no outbox CTE). */
const CHECKED_TEXTS = { plain: insertCheckedTexts({}), reserve: insertCheckedTexts({ attachments: 'reserve' }) };

function insertCheckedSql(single: boolean, { outbox, attachments, envelopes }: InsertCheckedOptions): string {
  // Attachment rows, read by index as the instance rows are, each naming its item (`input.n`).
  // 'reserve' (the transactional path, one item): a path taken already is skipped and answered
  // (`reserved`), the caller reserves that file again under another name. 'insert' (the
  // one-statement path): a taken path fails the whole statement (unique violation).
  const attached = attachments ? `, ${attachedCte(11, attachments === 'reserve')}` : '';
  // One row (a statement that found nothing waiting: StatementBatches groups only what waits) goes
  // as scalar parameters: the answers' JSON and the XML are sent as they are, where arrays
  // make the driver copy each again (`[...]` around the JSON, array quoting of the XML, then a
  // flattening copy of each: about 18 KB per 250-answer submission,
  // docs/architecture.md, "The submission record: one pass, few allocations"). Its own statement text, prepared once as well.
  const input = single
    ? `SELECT $1::int AS form_id, $2::varchar AS uuid, $3::jsonb AS json, $4::text AS xml, $5::varchar AS content_hash,
         $6::int AS submitted_by_id, $7::varchar AS version, $8::varchar AS check_version, $9::boolean AS superuser, $10::text AS roles, 1 AS n`
    : `SELECT ($1::int[])[i] AS form_id, ($2::varchar[])[i] AS uuid, ($3::jsonb)->(i - 1) AS json, ($4::text[])[i] AS xml, ($5::varchar[])[i] AS content_hash,
         ($6::int[])[i] AS submitted_by_id, ($7::varchar[])[i] AS version, ($8::varchar[])[i] AS check_version, ($9::boolean[])[i] AS superuser, ($10::text[])[i] AS roles, i AS n
       FROM generate_subscripts($1::int[], 1) AS i`;
  return `WITH input AS (
       ${input}
     ), allowed AS (
       SELECT i.*, EXISTS (SELECT 1 FROM forms f WHERE f.id = i.form_id AND f.deleted_at IS NULL AND f.accepting_submissions AND f.version = i.check_version)
         AND (i.superuser OR EXISTS (SELECT 1 FROM form_roles r WHERE r.form_id = i.form_id AND r.user_id = i.submitted_by_id AND r.role = ANY(string_to_array(i.roles, ',')))) AS ok
       FROM input i
     ), inserted AS (
       INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version)
       SELECT form_id, uuid, json, xml, content_hash, submitted_by_id, version FROM allowed WHERE ok ORDER BY form_id, uuid
       ON CONFLICT (form_id, uuid) DO NOTHING
       RETURNING *
     )${attached}${envelopes ? envelopeCtes(envelopes === 'kept') : ''}${outbox ? `, queued AS (${outbox})` : ''}
     SELECT a.form_id, a.uuid, a.ok, ins.id, ins.status, ins.date_created, ins.date_modified,
       ${outbox ? '(SELECT count(*) FROM queued)::int' : '0'} AS queued${attachments === 'reserve' ? ', ARRAY(SELECT filename FROM attached) AS attached' : ''}
     FROM allowed a LEFT JOIN inserted ins ON ins.form_id = a.form_id AND ins.uuid = a.uuid`;
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
  items: InsertItem[],
  texts: InsertCheckedTexts,
): Promise<CheckedInsert[]> {
  const { attachments, envelopes } = texts.options;
  const single = items.length === 1;
  const column = <T>(f: (item: InsertItem) => T): T[] | T => (single ? f(items[0]!) : items.map(f));
  const answersJson = (item: InsertItem) => item.row.jsonText ?? JSON.stringify(item.row.json);
  const rows = (await run(
    single ? texts.single : texts.multi,
    [
      column((i) => i.row.formId), column((i) => i.row.uuid), single ? answersJson(items[0]!) : `[${items.map(answersJson).join(',')}]`, column((i) => i.row.xml),
      column((i) => i.row.contentHash), column((i) => i.row.submittedById), column((i) => i.row.version), column((i) => i.check.version),
      column((i) => i.check.superuser), column((i) => i.check.roles.join(',')),
      ...(attachments ? attachedParams(items) : []),
      ...(envelopes ? envelopeParams(items.map((i) => i.envelope), envelopes === 'kept') : []),
    ],
  )) as Array<{ form_id: number; uuid: string; ok: boolean; id: number | null; status: string; date_created: Date; date_modified: Date; queued: number; attached?: string[] }>;
  const byKey = new Map(rows.map((r) => [`${r.form_id}/${r.uuid}`, r]));
  // The outbox rows are counted over the whole statement: the first created row carries them (the caller only wakes the relay on it).
  let queued = rows[0]?.queued ?? 0;
  return items.map(({ row }) => {
    const r = byKey.get(`${row.formId}/${row.uuid}`)!;
    if (!r.ok || r.id === null) return { allowed: r.ok, created: null, queued: 0 };
    const created: SubmissionEntity = {
      formId: row.formId, uuid: row.uuid, json: row.json, xml: row.xml, contentHash: row.contentHash, submittedById: row.submittedById, version: row.version,
      id: r.id, status: r.status, edited: false, bambooDatasetId: '', dateCreated: r.date_created, dateModified: r.date_modified, deletedAt: null,
    };
    const mine = queued;
    queued = 0;
    return { allowed: true, created, queued: mine, ...(r.attached ? { reserved: new Set(r.attached) } : {}) };
  });
}

/**
 * The one-statement insert with attachments failed because a storage path it claimed has a row
 * already (attachments.filename is unique): nothing was stored; the caller takes the transactional path.
 */
export function isAttachmentPathTaken(err: unknown): boolean {
  const e = err as { code?: string; table?: string };
  return e?.code === '23505' && e.table === 'attachments';
}
