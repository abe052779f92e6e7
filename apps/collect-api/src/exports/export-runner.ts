import { PassThrough } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ReadSlots } from '../database/read-slots.js';
import { EntityAttachmentsService } from '../entity-attachments/entity-attachments.service.js';
import { writeListCsv } from '../entity-attachments/entity-list-csv.js';
import { FormsRepository } from '../forms/forms.repository.js';
import type { JobData } from '../jobs/job.types.js';
import { OnJob } from '../jobs/on-job.decorator.js';
import { MediaRepository } from '../media/media.repository.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import type { ExportJobEntity } from './export-job.entity.js';
import { ExportJobsRepository } from './export-jobs.repository.js';
import type { ExportOptions } from './export-columns.js';
import { ExportsService } from './exports.service.js';
import { writeEntityListXlsx } from './entity-list-export.js';
import { writeMediaArchive } from './media-archive.js';
import { formulaGuard } from './spreadsheet-cells.js';

/** Progress is written at most this often (ms): one UPDATE per batch would cost more than the export. */
const PROGRESS_EVERY_MS = 500;

type Run = (out: PassThrough, progress: (fraction: number) => void) => Promise<void>;

/**
 * The `export` job (jobs/job.types.ts), run by the worker process only (docs/exports.md,
 * "Asynchronous exports"): writes the file of one export_jobs row to storage under
 * `exports/<id>.<ext>`, recording progress, then `done` with its path or `failed`. The
 * requester's role was checked when the export was requested, as a synchronous export's is
 * checked when it starts. Expired exports and their files are removed before each new one.
 */
@Injectable()
export class ExportRunner {
  private readonly logger = new Logger(ExportRunner.name);

  constructor(
    private readonly repo: ExportJobsRepository,
    private readonly exports: ExportsService,
    private readonly forms: FormsRepository,
    private readonly mediaRepo: MediaRepository,
    private readonly slots: ReadSlots,
    private readonly lists: EntityAttachmentsService,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  @OnJob('export')
  async run({ exportId }: JobData<'export'>): Promise<void> {
    await this.sweep();
    const job = await this.repo.find(exportId);
    // Expired (and swept) or finished before a re-run of the same job: nothing to do.
    if (!job || job.status === 'done' || job.status === 'failed') return;
    if (job.entityListId !== null) return this.execute(job, this.listRun(job, job.entityListId));
    const form = await this.forms.findLive(job.formId!);
    if (!form) {
      await this.repo.update(job.id, { status: 'failed', error: 'The form was deleted.' });
      return;
    }
    const run: Run =
      job.format === 'zip'
        ? await this.archiveRun(form.id)
        : (out, progress) => this.exports.write(this.exports.formSource(form), job.format as 'csv' | 'xlsx', job.options as unknown as ExportOptions, out, this.slots.background(), (done, total) => progress(total ? done / total : 1));
    await this.execute(job, run);
  }

  /** Removes expired exports and their files. */
  async sweep(): Promise<void> {
    for (const job of await this.repo.expired(new Date())) {
      if (job.path) await this.storage.delete(job.path).catch((err: unknown) => this.logger.warn({ err, export: job.id }, 'could not remove expired export file'));
      await this.repo.remove(job.id);
    }
  }

  /**
   * An entity list's file, CSV or XLSX, as its downloads write it (docs/entities.md, "Exports of a
   * list"), from a cursor on a background lease; progress is not known before the end (the list
   * is not counted first). A list deleted meanwhile fails the export.
   */
  private listRun(job: ExportJobEntity, listId: number): Run {
    return async (out) => {
      const open = await this.lists.openRows(listId, this.slots.background());
      try {
        if (job.format === 'xlsx') await writeEntityListXlsx(open.head.properties, open.batches, out);
        else await writeListCsv(open.head.properties, open.batches, out, formulaGuard(job.options.escapeFormulas !== false));
      } finally {
        await open.close();
      }
    };
  }

  private async archiveRun(formId: number): Promise<Run> {
    const filter = { formIds: [formId] };
    const total = await this.mediaRepo.count(filter);
    return (out, progress) => writeMediaArchive(this.mediaRepo.archiveEntries(filter), this.storage, out, (files) => progress(total ? files / total : 1));
  }

  private async execute(job: ExportJobEntity, run: Run): Promise<void> {
    const path = `exports/${job.id}.${job.format}`;
    let last = 0;
    const progress = (fraction: number) => {
      if (Date.now() - last < PROGRESS_EVERY_MS) return;
      last = Date.now();
      void this.repo.progress(job.id, Math.min(0.99, fraction)).catch(() => undefined);
    };
    try {
      await this.repo.update(job.id, { status: 'running', progress: 0 });
      const out = new PassThrough();
      const stored = this.storage.putStream(path, out, 'application/octet-stream');
      await Promise.all([run(out, progress).then(() => out.end(), (err: unknown) => (out.destroy(err as Error), Promise.reject(err))), stored]);
      const size = (await this.storage.stat(path))?.size ?? null;
      await this.repo.update(job.id, { status: 'done', progress: 1, path, size });
    } catch (err) {
      this.logger.error({ err, export: job.id }, 'export failed');
      await this.storage.delete(path).catch(() => undefined);
      await this.repo.update(job.id, { status: 'failed', error: 'The export could not be written.' });
    }
  }
}
