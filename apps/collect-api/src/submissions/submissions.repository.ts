import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type EntityManager, type Repository } from 'typeorm';
import { AttachmentEntity, SubmissionEntity } from './submission.entity.js';

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

  /** Inserts unless (form, uuid) exists (a concurrent duplicate); returns null in that case. */
  async insertIfAbsent(m: EntityManager, row: Partial<SubmissionEntity>): Promise<SubmissionEntity | null> {
    const result = await m
      .createQueryBuilder()
      .insert()
      .into(SubmissionEntity)
      .values(row as SubmissionEntity)
      .orIgnore()
      .returning('*')
      .execute();
    const raw = (result.raw as Array<Record<string, unknown>>)[0];
    if (!raw) return null;
    return m.getRepository(SubmissionEntity).create({
      ...(row as SubmissionEntity),
      id: raw.id as number,
      status: raw.status as string,
      edited: false,
      bambooDatasetId: '',
      dateCreated: raw.date_created as Date,
      dateModified: raw.date_modified as Date,
      deletedAt: null,
    });
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

  async page(formId: number, offset: number, limit: number): Promise<{ rows: SubmissionEntity[]; total: number }> {
    const [rows, total] = await this.submissions.findAndCount({ where: { formId, deletedAt: IsNull() }, order: { id: 'ASC' }, skip: offset, take: limit });
    return { rows, total };
  }

  async usernames(ids: Array<number | null>): Promise<Map<number, string>> {
    const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
    if (!wanted.length) return new Map();
    const rows = (await this.submissions.manager.query(`SELECT id, username FROM users WHERE id = ANY($1)`, [wanted])) as Array<{ id: number; username: string }>;
    return new Map(rows.map((r) => [r.id, r.username]));
  }
}
