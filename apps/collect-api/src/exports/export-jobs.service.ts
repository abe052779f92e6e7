import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Inject, Injectable, Logger, NotFoundException, type OnApplicationShutdown } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { MediaService } from '../media/media.service.js';
import { MediaRepository } from '../media/media.repository.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import type { Readable } from 'node:stream';
import { ExportJobEntity, type ExportJobFormat } from './export-job.entity.js';
import { ExportJobsRepository } from './export-jobs.repository.js';
import type { ExportOptions } from './export-columns.js';
import { ExportsService } from './exports.service.js';
import { writeMediaArchive } from './media-archive.js';

/** `GET /api/v1/export/{id}` (decisions: id, status, progress, download_url, expires_at, error). */
export interface ExportJobBody {
  id: string;
  status: ExportJobEntity['status'];
  progress: number;
  download_url: string | null;
  expires_at: string;
  error: string | null;
}

/** Progress is written at most this often (ms): one UPDATE per batch would cost more than the export. */
const PROGRESS_EVERY_MS = 500;

/**
 * Asynchronous exports (docs/exports.md): the request is checked with the roles of the listing
 * it mirrors, recorded, answered 202, and the file is written to storage under
 * `exports/<id>.<ext>` by the process that accepted it, one export at a time (docs/exports.md
 * says what a restart does to one under way). Only the requester sees it; it expires after
 * EXPORT_TTL_SECONDS and its file is removed.
 */
@Injectable()
export class ExportJobsService implements OnApplicationShutdown {
  private readonly logger = new Logger(ExportJobsService.name);
  private readonly queue: Array<() => Promise<void>> = [];
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(
    private readonly repo: ExportJobsRepository,
    private readonly exports: ExportsService,
    private readonly media: MediaService,
    private readonly mediaRepo: MediaRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  async create(user: AuthenticatedUser, formPk: number, format: ExportJobFormat, options: ExportOptions): Promise<ExportJobBody> {
    // The same checks as the synchronous routes, before anything is recorded (404/403).
    const run = format === 'zip' ? await this.archiveRun(user, formPk) : await this.dataRun(user, formPk, format, options);
    const job = await this.repo.insert({
      id: randomUUID(), ownerId: user.id, formId: formPk, format, options: { ...options }, status: 'pending', progress: 0,
      expiresAt: new Date(Date.now() + this.config.EXPORT_TTL_SECONDS * 1000),
    });
    this.enqueue(() => this.execute(job, run));
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

  /** Removes expired exports and their files; called before each new export and on status reads. */
  async sweep(): Promise<void> {
    for (const job of await this.repo.expired(new Date())) {
      if (job.path) await this.storage.delete(job.path).catch((err: unknown) => this.logger.warn({ err, export: job.id }, 'could not remove expired export file'));
      await this.repo.remove(job.id);
    }
  }

  onApplicationShutdown(): void {
    this.stopping = true;
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

  private async dataRun(user: AuthenticatedUser, formPk: number, format: 'csv' | 'xlsx', options: ExportOptions) {
    const source = await this.exports.source(user, { kind: 'form', pk: formPk });
    return (out: PassThrough, progress: (fraction: number) => void) => this.exports.write(source, format, options, out, (done, total) => progress(total ? done / total : 1));
  }

  private async archiveRun(user: AuthenticatedUser, formPk: number) {
    const filter = await this.media.resolveFilter(user, { xform: formPk });
    const total = await this.mediaRepo.count(filter);
    return (out: PassThrough, progress: (fraction: number) => void) =>
      writeMediaArchive(this.mediaRepo.archiveEntries(filter), this.storage, out, (files) => progress(total ? files / total : 1));
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue.push(task);
    if (this.running) return;
    this.running = (async () => {
      while (this.queue.length && !this.stopping) await this.queue.shift()!();
      this.running = null;
    })();
  }

  private async execute(job: ExportJobEntity, run: (out: PassThrough, progress: (fraction: number) => void) => Promise<void>): Promise<void> {
    const path = `exports/${job.id}.${job.format}`;
    let last = 0;
    const progress = (fraction: number) => {
      if (Date.now() - last < PROGRESS_EVERY_MS) return;
      last = Date.now();
      void this.repo.update(job.id, { progress: Math.min(0.99, fraction) }).catch(() => undefined);
    };
    try {
      await this.sweep();
      await this.repo.update(job.id, { status: 'running' });
      const out = new PassThrough();
      const stored = this.storage.putStream(path, out, 'application/octet-stream');
      await Promise.all([run(out, progress).then(() => out.end(), (err: unknown) => (out.destroy(err as Error), Promise.reject(err))), stored]);
      await this.repo.update(job.id, { status: 'done', progress: 1, path });
    } catch (err) {
      this.logger.error({ err, export: job.id }, 'export failed');
      await this.storage.delete(path).catch(() => undefined);
      await this.repo.update(job.id, { status: 'failed', error: 'The export could not be written.' });
    }
  }
}
