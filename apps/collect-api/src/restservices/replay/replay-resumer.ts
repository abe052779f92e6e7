import { Injectable } from '@nestjs/common';
import { CollectConfig } from '../../config/collect-config.js';
import { PeriodicWorker } from '../../jobs/periodic-worker.js';
import { ReplayService } from './replay.service.js';
import { ReplaysRepository } from './replays.repository.js';

/**
 * The worker side of replays (docs/restservices.md, "Replay"): every FORWARD_RELAY_INTERVAL_MS
 * it re-queues the `replay` job of a replay whose rows are not all written (a job lost with
 * Redis, a worker stopped mid-way) and drops rows of a cancelled replay that a worker put back
 * while the cancel ran.
 */
@Injectable()
export class ReplayResumer extends PeriodicWorker<void> {
  constructor(
    private readonly repo: ReplaysRepository,
    private readonly replays: ReplayService,
    config: CollectConfig,
  ) {
    super(config.FORWARD_RELAY_INTERVAL_MS);
  }

  protected async pass(): Promise<void> {
    try {
      for (const id of await this.repo.unwritten()) await this.replays.queue(id);
      await this.repo.purgeCancelled();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'replay resume pass failed; will retry');
    }
  }
}
