import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { JobQueue } from '../jobs/job-queue.js';
import { MediaService } from '../media/media.service.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { ExportJobEntity, type ExportJobFormat } from './export-job.entity.js';
import { ExportJobsRepository } from './export-jobs.repository.js';
import type { ExportOptions } from './export-columns.js';
import { ExportsService } from './exports.service.js';

/** `GET /api/v1/export/{id}` (docs/exports.md: id, status, progress, download_url, expires_at, error). */
export interface ExportJobBody {
  id: string;
  status: ExportJobEntity['status'];
  progress: number;
  download_url: string | null;
  expires_at: string;
  error: string | null;
}

/**
 * Asynchronous exports, the API's side (docs/exports.md, "Asynchronous exports"): the request
 * is checked with the roles of the listing it mirrors, recorded, queued as an `export` job and
 * answered 202; the worker process writes the file (export-runner.ts). Only the requester sees
 * the export; after EXPORT_TTL_SECONDS it answers 404 and the worker removes it.
 */
@Injectable()
export class ExportJobsService {
  constructor(
    private readonly repo: ExportJobsRepository,
    private readonly exports: ExportsService,
    private readonly media: MediaService,
    private readonly jobs: JobQueue,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  async create(user: AuthenticatedUser, formPk: number, format: ExportJobFormat, options: ExportOptions): Promise<ExportJobBody> {
    // The same checks as the synchronous routes, before anything is recorded (404/403).
    if (format === 'zip') await this.media.resolveFilter(user, { xform: formPk });
    else await this.exports.source(user, { kind: 'form', pk: formPk });
    const job = await this.repo.insert({
      id: randomUUID(), ownerId: user.id, formId: formPk, format, options: { ...options }, status: 'pending', progress: 0,
      expiresAt: new Date(Date.now() + this.config.EXPORT_TTL_SECONDS * 1000),
    });
    try {
      await this.jobs.add({ name: 'export', data: { exportId: job.id } });
    } catch (err) {
      // Not queued (Redis down): the row must not stay `pending` for ever.
      await this.repo.update(job.id, { status: 'failed', error: 'The export could not be queued.' });
      throw err;
    }
    return this.body(job);
  }

  async status(user: AuthenticatedUser, id: string): Promise<ExportJobBody> {
    return this.body(await this.visible(user, id));
  }

  /** The finished file, or 404 (not the requester's, not done, expired). */
  async download(user: AuthenticatedUser, id: string): Promise<{ stream: Readable; name: string; format: ExportJobFormat }> {
    const job = await this.visible(user, id);
    if (job.status !== 'done' || !job.path) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return { stream: await this.storage.read(job.path), name: `export-${job.id}.${job.format}`, format: job.format };
  }

  private async visible(user: AuthenticatedUser, id: string): Promise<ExportJobEntity> {
    const job = await this.repo.find(id);
    if (!job || (job.ownerId !== user.id && !user.isSuperuser) || job.expiresAt.getTime() <= Date.now()) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return job;
  }

  private body(job: ExportJobEntity): ExportJobBody {
    return {
      id: job.id,
      status: job.status,
      progress: job.progress,
      download_url: job.status === 'done' ? `${this.config.PUBLIC_BASE_URL}/api/v1/export/${job.id}/download` : null,
      expires_at: job.expiresAt.toISOString(),
      error: job.error,
    };
  }
}
