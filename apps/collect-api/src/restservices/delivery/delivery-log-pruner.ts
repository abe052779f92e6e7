import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../../config/collect-config.js';
import { PeriodicTask } from '../../jobs/periodic-task.js';
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
export class DeliveryLogPruner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryLogPruner.name);
  private readonly task: PeriodicTask<number>;

  constructor(
    private readonly repo: RestServicesRepository,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    this.task = new PeriodicTask(() => this.prune(), config.FORWARD_LOG_PRUNE_INTERVAL_MS);
  }

  onApplicationBootstrap(): void {
    if (this.config.FORWARD_LOG_RETENTION_DAYS === 0) return;
    // First run soon after start: workers restarted by every deploy would otherwise never reach
    // a full interval.
    this.task.start(Math.min(60_000, this.config.FORWARD_LOG_PRUNE_INTERVAL_MS));
  }

  /** Deletes what is past retention (bounded per run); the number of deliveries deleted. */
  pruneOnce(): Promise<number> {
    return this.task.runOnce();
  }

  private async prune(): Promise<number> {
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

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}
