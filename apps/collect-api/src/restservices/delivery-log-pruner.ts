import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { RestServicesRepository } from './restservices.repository.js';

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
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<number> | null = null;

  constructor(
    private readonly repo: RestServicesRepository,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.FORWARD_LOG_RETENTION_DAYS === 0) return;
    const interval = this.config.FORWARD_LOG_PRUNE_INTERVAL_MS;
    const schedule = (delay: number) => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.pruneOnce().finally(() => schedule(interval)), delay);
      this.timer.unref();
    };
    // First run soon after start: workers restarted by every deploy would otherwise never reach
    // a full interval.
    schedule(Math.min(60_000, interval));
  }

  /** Deletes what is past retention (bounded per run); the number of deliveries deleted. */
  pruneOnce(): Promise<number> {
    this.running ??= this.prune().finally(() => (this.running = null));
    return this.running;
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

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
