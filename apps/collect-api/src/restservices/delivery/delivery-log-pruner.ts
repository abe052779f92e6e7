import { Injectable } from '@nestjs/common';
import { CollectConfig } from '../../config/collect-config.js';
import { PeriodicWorker } from '../../jobs/periodic-worker.js';
import { RestServicesRepository } from '../restservices.repository.js';

const BATCH = 5_000;
/** One run never holds the worker's database connection for long; the next run continues. */
const MAX_BATCHES_PER_RUN = 20;

/**
 * Keeps the delivery log bounded: every submission writes one delivery row per active service
 * and one attempt row per try, forever, unless something removes them. Provided in the worker
 * composition only (DeliveryWorkerModule); several workers pruning at once just find fewer rows.
 */
@Injectable()
export class DeliveryLogPruner extends PeriodicWorker<number> {
  constructor(private readonly repo: RestServicesRepository, private readonly config: CollectConfig) {
    super(config.FORWARD_LOG_PRUNE_INTERVAL_MS);
  }

  protected firstDelayMs(): number | null {
    if (this.config.FORWARD_LOG_RETENTION_DAYS === 0) return null;
    // First run soon after start: workers restarted by every deploy would otherwise never reach
    // a full interval.
    return Math.min(60_000, this.config.FORWARD_LOG_PRUNE_INTERVAL_MS);
  }

  /** Deletes what is past retention (bounded per run); the number of deliveries deleted. */
  pruneOnce(): Promise<number> {
    return this.runOnce();
  }

  protected async pass(): Promise<number> {
    const days = this.config.FORWARD_LOG_RETENTION_DAYS;
    if (days === 0) return 0;
    let total = 0;
    try {
      for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
        const deleted = await this.repo.pruneFinished(days, BATCH);
        total += deleted;
        if (deleted < BATCH) break;
      }
      if (total) this.logger.log({ event: 'delivery_log.pruned', deliveries: total, retention_days: days });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'delivery log clean-up failed; will retry');
    }
    return total;
  }
}
