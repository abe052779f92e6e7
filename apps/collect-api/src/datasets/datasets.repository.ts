import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type Repository } from 'typeorm';
import { SubmissionEntity } from '../submissions/submission.entity.js';
import { DataviewEntity, MergedDatasetEntity } from './dataset.entities.js';
import type { CompiledWhere } from './dataview-query.js';

@Injectable()
export class DatasetsRepository {
  constructor(
    @InjectRepository(MergedDatasetEntity) private readonly merged: Repository<MergedDatasetEntity>,
    @InjectRepository(DataviewEntity) private readonly views: Repository<DataviewEntity>,
  ) {}

  /** The submissions a dataview filters, read through the same connection as the views. */
  private get submissions(): Repository<SubmissionEntity> {
    return this.views.manager.getRepository(SubmissionEntity);
  }

  insertMerged(row: Partial<MergedDatasetEntity>): Promise<MergedDatasetEntity> {
    return this.merged.save(this.merged.create(row));
  }

  findMerged(id: number): Promise<MergedDatasetEntity | null> {
    return this.merged.findOneBy({ id, deletedAt: IsNull() });
  }

  allMerged(): Promise<MergedDatasetEntity[]> {
    return this.merged.find({ where: { deletedAt: IsNull() }, order: { id: 'ASC' } });
  }

  async deleteMerged(id: number): Promise<void> {
    await this.merged.update({ id }, { deletedAt: new Date() });
  }

  insertView(row: Partial<DataviewEntity>): Promise<DataviewEntity> {
    return this.views.save(this.views.create(row));
  }

  findView(id: number): Promise<DataviewEntity | null> {
    return this.views.findOneBy({ id, deletedAt: IsNull() });
  }

  viewsOfForms(formIds: number[]): Promise<DataviewEntity[]> {
    if (!formIds.length) return Promise.resolve([]);
    return this.views.find({ where: { formId: In(formIds), deletedAt: IsNull() }, order: { id: 'ASC' } });
  }

  async updateView(id: number, changes: Partial<Pick<DataviewEntity, 'name' | 'columns' | 'query' | 'project'>>): Promise<void> {
    await this.views.update({ id }, { ...changes, dateModified: new Date() } as never);
  }

  async deleteView(id: number): Promise<void> {
    await this.views.update({ id }, { deletedAt: new Date() });
  }

  async countLive(formIds: number[]): Promise<number> {
    if (!formIds.length) return 0;
    return this.submissions.count({ where: { formId: In(formIds), deletedAt: IsNull() } });
  }

  /** Live submissions of a form matching a compiled dataview condition (alias `s`). */
  async filtered(formId: number, where: CompiledWhere, offset: number, limit: number): Promise<{ rows: SubmissionEntity[]; total: number }> {
    const [rows, total] = await this.submissions
      .createQueryBuilder('s')
      .where('s.form_id = :formId AND s.deleted_at IS NULL', { formId })
      .andWhere(where.sql, where.params)
      .orderBy('s.id', 'ASC')
      .skip(offset)
      .take(limit)
      .getManyAndCount();
    return { rows, total };
  }
}
