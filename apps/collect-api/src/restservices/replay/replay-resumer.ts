import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../../config/collect-config.js';
import { PeriodicTask } from '../../jobs/periodic-task.js';
import { ReplayService } from './replay.service.js';
import { ReplaysRepository } from './replays.repository.js';

/**
 * The worker side of replays (docs/restservices.md, "Replay"): every FORWARD_RELAY_INTERVAL_MS
 * it re-queues the `replay` job of a replay whose rows are not all written (a job lost with
 * Redis, a worker stopped mid-way) and drops rows of a cancelled replay that a worker put back
 * while the cancel ran.
 */
@Injectable()
export class ReplayResumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ReplayResumer.name);
  private readonly task: PeriodicTask<void>;

  constructor(
    private readonly repo: ReplaysRepository,
    private readonly replays: ReplayService,
    @Inject(COLLECT_CONFIG) config: CollectConfig,
  ) {
    this.task = new PeriodicTask(() => this.pass(), config.FORWARD_RELAY_INTERVAL_MS);
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  private async pass(): Promise<void> {
    try {
      for (const id of await this.repo.unwritten()) await this.replays.queue(id);
      await this.repo.purgeCancelled();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'replay resume pass failed; will retry');
    }
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}
