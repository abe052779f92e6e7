import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type Repository, type SelectQueryBuilder } from 'typeorm';
import type { CompiledWhere } from '../datasets/dataview-query.js';
import { CURSOR_BATCH } from '../database/cursor.js';
import { AttachmentEntity, SubmissionEntity } from '../submissions/submission.entity.js';

export const MEDIA_TYPES = ['image', 'audio', 'video', 'document'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** A listing filter whose form ids were already permission-checked by the service. */
export interface MediaFilter {
  formIds: number[];
  instanceId?: number;
  /** A dataview's compiled condition over the submissions table aliased `s`. */
  dataview?: CompiledWhere;
  type?: MediaType;
  /** Submissions received at or after / before these times (media archives). */
  submittedAfter?: Date;
  submittedBefore?: Date;
}

/** One file of a media archive: the attachment and its submission's instance uuid. */
export interface ArchiveEntryRow {
  id: number;
  filename: string;
  /** The name the client gave (unique within its submission). */
  name: string;
  size: number;
  uuid: string;
  date_created: Date;
}

/** Queries on live attachments (`deleted_at IS NULL`: deleted submissions hide their files). */
@Injectable()
export class MediaRepository {
  constructor(@InjectRepository(AttachmentEntity) private readonly attachments: Repository<AttachmentEntity>) {}

  findLive(id: number): Promise<AttachmentEntity | null> {
    if (!Number.isSafeInteger(id) || id < 1 || id > 2_147_483_647) return Promise.resolve(null);
    return this.attachments.findOneBy({ id, deletedAt: IsNull() });
  }

  /** Remembers that no variant can be made of this file (the first failure wins). */
  async markVariantFailed(id: number, reason: string): Promise<void> {
    await this.attachments.update({ id, variantError: IsNull() }, { variantError: reason.slice(0, 255) });
  }

  /** Live attachments of one submission (variant generation at intake). */
  liveOfSubmission(submissionId: number): Promise<AttachmentEntity[]> {
    return this.attachments.find({ where: { submissionId, deletedAt: IsNull() }, order: { id: 'ASC' } });
  }

  private query(filter: MediaFilter): SelectQueryBuilder<AttachmentEntity> {
    const qb = this.attachments.createQueryBuilder('a').where('a.deleted_at IS NULL');
    // One form: `=` lets the planner walk (form_id, id) in order and stop after the page.
    if (filter.formIds.length === 1) qb.andWhere('a.form_id = :formId', { formId: filter.formIds[0] });
    else qb.andWhere('a.form_id = ANY(:formIds)', { formIds: filter.formIds });
    if (filter.instanceId !== undefined) qb.andWhere('a.submission_id = :instanceId', { instanceId: filter.instanceId });
    if (filter.type) qb.andWhere('media_type_of(a.mimetype) = :mediaType', { mediaType: filter.type });
    if (filter.dataview || filter.submittedAfter || filter.submittedBefore) qb.innerJoin(SubmissionEntity, 's', 's.id = a.submission_id AND s.deleted_at IS NULL');
    if (filter.dataview) qb.andWhere(`(${filter.dataview.sql})`, filter.dataview.params);
    if (filter.submittedAfter) qb.andWhere('s.date_created >= :submittedAfter', { submittedAfter: filter.submittedAfter });
    if (filter.submittedBefore) qb.andWhere('s.date_created < :submittedBefore', { submittedBefore: filter.submittedBefore });
    return qb;
  }

  async page(filter: MediaFilter, offset: number, limit: number): Promise<AttachmentEntity[]> {
    if (!filter.formIds.length) return [];
    if (filter.dataview || offset === 0) return this.query(filter).orderBy('a.id', 'ASC').offset(offset).limit(limit).getMany();
    // Deep pages: skip the offset on ids alone (an index-only walk of (form_id, id) after
    // VACUUM), then load the page's rows: the skipped rows' heap pages are never read.
    const ids = (await this.query(filter).select('a.id', 'id').orderBy('a.id', 'ASC').offset(offset).limit(limit).getRawMany<{ id: number }>()).map((r) => r.id);
    if (!ids.length) return [];
    return this.attachments.find({ where: { id: In(ids) }, order: { id: 'ASC' } });
  }

  /**
   * The files of a media archive in attachment order, in batches of CURSOR_BATCH read by id
   * (`a.id > last`, the (form_id, id) index): each batch is one short statement, so no
   * connection is held while the archive waits for its client, however large its files
   * (docs/media.md, "Media archives"; docs/security.md, "Streamed reads and heavy queries").
   */
  async *archiveEntries(filter: MediaFilter): AsyncGenerator<ArchiveEntryRow[]> {
    if (!filter.formIds.length) return;
    for (let after = 0; ; ) {
      const rows = await this.query(filter)
        .innerJoin(SubmissionEntity, 'sub', 'sub.id = a.submission_id')
        .andWhere('a.id > :after', { after })
        .select(['a.id AS id', 'a.filename AS filename', 'a.name AS name', 'a.size::bigint::float8 AS size', 'sub.uuid AS uuid', 'sub.date_created AS date_created'])
        .orderBy('a.id', 'ASC')
        .limit(CURSOR_BATCH)
        .getRawMany<ArchiveEntryRow>();
      if (rows.length) yield rows;
      if (rows.length < CURSOR_BATCH) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * Live attachments matching the filter. Form and type filters read the trigger-maintained
   * `media_counts` rows (migration 1764200000000); instance and dataview filters count rows.
   */
  async count(filter: MediaFilter): Promise<number> {
    if (!filter.formIds.length) return 0;
    if (filter.instanceId === undefined && !filter.dataview && !filter.submittedAfter && !filter.submittedBefore) {
      // Column names come from the closed MEDIA_TYPES list, never from input text.
      if (filter.type && !MEDIA_TYPES.includes(filter.type)) throw new Error(`unknown media type ${String(filter.type)}`);
      const column = filter.type ?? 'image + audio + video + document';
      const rows = (await this.attachments.manager.query(`SELECT COALESCE(sum(${column}), 0)::bigint AS n FROM media_counts WHERE form_id = ANY($1)`, [filter.formIds])) as Array<{ n: string }>;
      return Number(rows[0]?.n ?? 0);
    }
    return this.query(filter).getCount();
  }
}
