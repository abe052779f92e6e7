import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, type Repository } from 'typeorm';
import { ExportJobEntity } from './export-job.entity.js';

@Injectable()
export class ExportJobsRepository {
  constructor(@InjectRepository(ExportJobEntity) private readonly jobs: Repository<ExportJobEntity>) {}

  insert(row: Partial<ExportJobEntity>): Promise<ExportJobEntity> {
    return this.jobs.save(this.jobs.create(row));
  }

  find(id: string): Promise<ExportJobEntity | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return Promise.resolve(null);
    return this.jobs.findOneBy({ id });
  }

  async update(id: string, changes: Partial<Pick<ExportJobEntity, 'status' | 'progress' | 'path' | 'error'>>): Promise<void> {
    await this.jobs.update({ id }, changes);
  }

  /** Progress of a running export; a late write after `done`/`failed` changes nothing. */
  async progress(id: string, fraction: number): Promise<void> {
    await this.jobs.update({ id, status: 'running' }, { progress: fraction });
  }

  /** Expired exports (their files are removed, then the rows). */
  expired(now: Date, limit = 100): Promise<ExportJobEntity[]> {
    return this.jobs.find({ where: { expiresAt: LessThan(now) }, take: limit });
  }

  async remove(id: string): Promise<void> {
    await this.jobs.delete({ id });
  }
}
