import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL, TooManyRequestsError } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import { JobQueue } from '../jobs/job-queue.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { ExportAccess } from './export-access.js';
import { ExportJobEntity, type ExportJobFormat } from './export-job.entity.js';
import { ExportJobsRepository } from './export-jobs.repository.js';
import type { ExportOptions } from './export-columns.js';

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
    private readonly access: ExportAccess,
    private readonly jobs: JobQueue,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    private readonly config: CollectConfig,
  ) {}

  /** `subject`: a form, or an entity list (csv, xlsx; of the options only `escapeFormulas` applies to it). */
  async create(user: AuthenticatedUser, subject: { formId: number } | { entityListId: number }, format: ExportJobFormat, options: ExportOptions): Promise<ExportJobBody> {
    const formId = 'formId' in subject ? subject.formId : null;
    const entityListId = 'entityListId' in subject ? subject.entityListId : null;
    const kept: Record<string, unknown> = entityListId === null ? { ...options } : { escapeFormulas: options.escapeFormulas };
    // The same checks as the synchronous routes, before anything is recorded (404/403).
    await this.access.check(user, format, { formId, entityListId });
    const twin = await this.withinQuota(user, { formId, entityListId, format, options: kept });
    if (twin) return this.body(twin);
    const job = await this.repo.insert({
      id: randomUUID(), ownerId: user.id, formId, entityListId, format, options: kept, status: 'pending', progress: 0,
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

  /**
   * The quotas of docs/exports.md, "Quotas": a waiting or running export asked for again (same
   * form or list, format and options) is that export; past EXPORT_OPEN_PER_USER open exports, or with
   * EXPORT_STORAGE_QUOTA_BYTES of finished files kept, a new one is 429.
   */
  private async withinQuota(user: AuthenticatedUser, same: { formId: number | null; entityListId: number | null; format: ExportJobFormat; options: Record<string, unknown> }): Promise<ExportJobEntity | null> {
    const usage = await this.repo.usage(user.id, same);
    if (usage.twin) return usage.twin;
    if (usage.open >= this.config.EXPORT_OPEN_PER_USER) {
      throw new TooManyRequestsError(`You have ${usage.open} exports waiting or running, the most one user may (EXPORT_OPEN_PER_USER); ask again when one is done.`, 30);
    }
    if (usage.bytes >= this.config.EXPORT_STORAGE_QUOTA_BYTES) {
      const wait = usage.firstExpiry ? (usage.firstExpiry.getTime() - Date.now()) / 1000 : 60;
      throw new TooManyRequestsError(`Your finished exports keep ${usage.bytes} bytes, the most one user may (EXPORT_STORAGE_QUOTA_BYTES); ask again when one expires.`, wait);
    }
    return null;
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
    // The requester must still hold the role the listing needs: a share taken away (or a
    // deleted form) takes the export with it, even one written before (docs/exports.md).
    await this.access.check(user, job.format, job);
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
