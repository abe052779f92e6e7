import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { PeriodicTask } from '../jobs/periodic-task.js';
import { FOLD_AT, SubmissionDataRepository } from './submission-data.repository.js';

/** How often the worker looks for forms to fold. */
export const FOLD_INTERVAL_MS = 60_000;
/** Forms folded per run; the next run continues (each fold is one short statement). */
const FORMS_PER_RUN = 500;

/**
 * Keeps `submission_count_deltas` small. Every intake statement adds a row per form it touches
 * (migration 1764910000000); a data page read folds its form's rows once it summed more than
 * FOLD_AT, but a form that is written and never read would gather rows for ever. The worker
 * folds such forms every FOLD_INTERVAL_MS (docs/data-api.md, "How it runs"). A fold is exact
 * beside intake and beside other folds (SubmissionDataRepository.foldCounts), so several
 * workers, or a worker and a page read, may fold the same form at once. Worker composition
 * only (SubmissionsWorkerModule).
 */
@Injectable()
export class SubmissionCountFolder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SubmissionCountFolder.name);
  private readonly task = new PeriodicTask(() => this.fold(), FOLD_INTERVAL_MS);

  constructor(private readonly repo: SubmissionDataRepository) {}

  onApplicationBootstrap(): void {
    this.task.start();
  }

  /** Folds every form with more than FOLD_AT rows (up to FORMS_PER_RUN); how many forms were folded. */
  foldOnce(): Promise<number> {
    return this.task.runOnce();
  }

  private async fold(): Promise<number> {
    let folded = 0;
    try {
      // One statement at a time: no connection is held while the next is asked for
      // (docs/architecture.md, "Database connections").
      for (const formId of await this.repo.formsToFold(FOLD_AT, FORMS_PER_RUN)) {
        if (this.task.isStopped) break;
        await this.repo.foldCounts(formId);
        folded++;
      }
      if (folded) this.logger.log({ event: 'submission_counts.folded', forms: folded });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'folding kept submission counts failed; will retry');
    }
    return folded;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}
