import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type EntityManager, type Repository } from 'typeorm';
import { preparedQuery } from '../database/prepared-query.js';
import { AttachmentEntity, SubmissionEntity, type SubmissionRecord } from './submission.entity.js';

/** A new instance's row as the intake's checked insert writes it. */
type InstanceRow = { formId: number; uuid: string; json: SubmissionRecord; xml: string; contentHash: string; submittedById: number; version: string };
/** What the checked insert re-checks against the database: the cached form version and role. */
type InstanceCheck = { version: string; superuser: boolean; roles: readonly string[] };
/** `allowed` false: nothing written, the cached view was stale. */
type CheckedInsert = { allowed: boolean; created: SubmissionEntity | null; queued: number };

/** Queries on `submissions` and `attachments`. Write paths take the transaction's EntityManager. */
@Injectable()
export class SubmissionsRepository {
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
  insertChecked(
    m: EntityManager,
    row: InstanceRow,
    check: InstanceCheck,
    outboxSql?: (inserted: string) => string,
  ): Promise<CheckedInsert> {
    return this.runInsertChecked((text, values) => m.query(text, values), row, check, outboxSql);
  }

  /**
   * `insertChecked` as a statement of its own, outside any transaction (it commits alone): the
   * one-statement intake. Its text is fixed, so it runs as a named prepared statement: planning
   * this CTE on every call cost PostgreSQL more than executing it (docs/benchmarks.md, "CPU per
   * request").
   */
  insertCheckedAlone(row: InstanceRow, check: InstanceCheck, outboxSql: (inserted: string) => string): Promise<CheckedInsert> {
    return this.runInsertChecked((text, values) => preparedQuery(this.submissions.manager.connection, text, values), row, check, outboxSql);
  }

  private async runInsertChecked(
    run: (text: string, values: unknown[]) => Promise<unknown>,
    row: InstanceRow,
    check: InstanceCheck,
    outboxSql?: (inserted: string) => string,
  ): Promise<CheckedInsert> {
    // With `outboxSql` the statement also writes the outbox rows of the new row (SubmissionOutbox.createdRowsSql).
    const outbox = outboxSql ? `, queued AS (${outboxSql('inserted')})` : '';
    const rows = (await run(
      `WITH allowed AS (
         SELECT EXISTS (SELECT 1 FROM forms WHERE id = $1 AND deleted_at IS NULL AND accepting_submissions AND version = $8)
           AND ($9::boolean OR EXISTS (SELECT 1 FROM form_roles WHERE form_id = $1 AND user_id = $6 AND role = ANY($10::varchar[]))) AS ok
       ), inserted AS (
         INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version)
         SELECT $1, $2, $3::jsonb, $4, $5, $6, $7 FROM allowed WHERE ok
         ON CONFLICT (form_id, uuid) DO NOTHING
         RETURNING *
       )${outbox}
       SELECT allowed.ok, inserted.id, inserted.status, inserted.date_created, inserted.date_modified,
         ${outboxSql ? '(SELECT count(*) FROM queued)::int' : '0'} AS queued
       FROM allowed LEFT JOIN inserted ON true`,
      [row.formId, row.uuid, JSON.stringify(row.json), row.xml, row.contentHash, row.submittedById, row.version, check.version, check.superuser, check.roles],
    )) as Array<{ ok: boolean; id: number | null; status: string; date_created: Date; date_modified: Date; queued: number }>;
    const r = rows[0]!;
    if (!r.ok || r.id === null) return { allowed: r.ok, created: null, queued: 0 };
    return {
      allowed: true,
      created: {
        ...row, id: r.id, status: r.status, edited: false, bambooDatasetId: '', dateCreated: r.date_created, dateModified: r.date_modified, deletedAt: null,
      },
      queued: r.queued,
    };
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
  async reserveAttachment(m: EntityManager, row: Partial<AttachmentEntity>): Promise<boolean> {
    const result = await m.createQueryBuilder().insert().into(AttachmentEntity).values(row as AttachmentEntity).orIgnore().returning('id').execute();
    return (result.raw as unknown[]).length > 0;
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
