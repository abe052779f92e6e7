import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, type Repository } from 'typeorm';
import type { ExportJobFormat } from './export-job.entity.js';
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

  async update(id: string, changes: Partial<Pick<ExportJobEntity, 'status' | 'progress' | 'path' | 'error' | 'size'>>): Promise<void> {
    await this.jobs.update({ id }, changes);
  }

  /** Progress of a running export; a late write after `done`/`failed` changes nothing. */
  async progress(id: string, fraction: number): Promise<void> {
    await this.jobs.update({ id, status: 'running' }, { progress: fraction });
  }

  /**
   * The owner's unexpired exports that count against the quotas (docs/exports.md, "Quotas"):
   * how many wait or run, the bytes the finished ones keep, when the first of those expires, and
   * a waiting or running one asked for with the same form, format and options.
   */
  async usage(ownerId: number, same: { formId: number | null; entityListId: number | null; format: ExportJobFormat; options: Record<string, unknown> }): Promise<{ open: number; bytes: number; firstExpiry: Date | null; twin: ExportJobEntity | null }> {
    const [row] = (await this.jobs.query(
      `SELECT count(*) FILTER (WHERE status IN ('pending', 'running'))::int AS open,
              COALESCE(sum(size) FILTER (WHERE status = 'done'), 0)::float8 AS bytes,
              min(expires_at) FILTER (WHERE status = 'done') AS first_expiry,
              (array_agg(id ORDER BY date_created) FILTER (WHERE status IN ('pending', 'running') AND form_id IS NOT DISTINCT FROM $2::int
                AND entity_list_id IS NOT DISTINCT FROM $5::int AND format = $3 AND options = $4::jsonb))[1] AS twin
       FROM export_jobs WHERE owner_id = $1 AND expires_at > now()`,
      [ownerId, same.formId, same.format, JSON.stringify(same.options), same.entityListId],
    )) as Array<{ open: number; bytes: number; first_expiry: Date | null; twin: string | null }>;
    return { open: row!.open, bytes: row!.bytes, firstExpiry: row!.first_expiry, twin: row!.twin ? await this.find(row!.twin) : null };
  }

  /** Expired exports (their files are removed, then the rows). */
  expired(now: Date, limit = 100): Promise<ExportJobEntity[]> {
    return this.jobs.find({ where: { expiresAt: LessThan(now) }, take: limit });
  }

  async remove(id: string): Promise<void> {
    await this.jobs.delete({ id });
  }
}
