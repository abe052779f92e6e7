import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { SubmissionEvents } from '../submissions/submission-events.js';
import { DeliveryService } from './delivery.service.js';
import { namesFor } from './forwarders/index.js';
import { RestServicesRepository } from './restservices.repository.js';
import { SheetsRepository } from './sheets/sheets.repository.js';
import { SheetsService } from './sheets/sheets.service.js';
import { DELIVERY_QUEUE, type DeliveryJob } from './restservices.tokens.js';

const BATCH = 500;
const NUDGE_DELAY_MS = 5;

/**
 * Outbox → Bull. Every process writes outbox rows in the submission transaction and nudges the
 * relay after commit; the worker process (dist/worker.js, or FORWARD_DELIVER_IN_PROCESS) also
 * polls (due retries, rows whose lease ran out) and consumes the queue. The Bull job id is the
 * row id, so re-adding a row that is still waiting in Redis is a no-op.
 */
@Injectable()
export class DeliveryRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRelay.name);
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private nudgeTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly repo: RestServicesRepository,
    private readonly delivery: DeliveryService,
    private readonly sheets: SheetsService,
    private readonly sheetsRepo: SheetsRepository,
    private readonly events: SubmissionEvents,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob>,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    events.useTransactionalHook(async (event, manager) => {
      const kind = event.type === 'submission.created' ? 'created' : event.type === 'submission.updated' ? 'updated' : 'deleted';
      await this.repo.enqueueForSubmission(manager, event.formId, event.submissionId, kind, namesFor(kind));
    });
    events.onCommitted(() => this.nudge());
  }

  get delivering(): boolean {
    return this.config.FORWARD_DELIVER_IN_PROCESS;
  }

  onApplicationBootstrap(): void {
    this.queue.on('error', (err) => this.logger.warn({ err: err.message }, 'delivery queue error'));
    if (!this.delivering) return;
    this.queue.on('failed', (job, err) => this.logger.error({ rowId: job.data.rowId, err: err.message }, 'delivery job failed; the row is re-queued when its lease ends'));
    void this.queue.process(this.config.FORWARD_CONCURRENCY, (job) => (job.data.backfillServiceId ? this.sheets.backfill(job.data.backfillServiceId) : this.delivery.deliver(job.data.rowId)));
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.tick().finally(loop), this.config.FORWARD_RELAY_INTERVAL_MS);
    };
    this.nudge();
    loop();
  }

  /** Moves due rows onto the queue soon; calls while a pass runs fold into one more pass. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.nudgeTimer) return;
    // A few milliseconds fold the commits of concurrent submissions into one relay pass.
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = null;
      void this.tick();
    }, NUDGE_DELAY_MS);
  }

  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        do {
          this.again = false;
          let claimed: number[];
          do {
            claimed = await this.repo.claimForQueue(BATCH, this.config.FORWARD_LEASE_MS);
            // If Redis is down this throws; the rows stay leased and are claimed again after FORWARD_LEASE_MS.
            if (claimed.length) await this.queue.addBulk(claimed.map((rowId) => ({ data: { rowId }, opts: { jobId: String(rowId), removeOnComplete: true, removeOnFail: true } })));
          } while (claimed.length === BATCH && !this.stopped);
        } while (this.again && !this.stopped);
        // Spreadsheet back-fills not finished (lost job, crashed worker) resume from their cursor.
        if (this.delivering) for (const id of await this.sheetsRepo.pendingBackfills()) await this.sheets.queueBackfill(id);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'delivery relay pass failed; will retry');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /**
   * SIGTERM: stop taking new jobs, let the ones in flight finish (their rows stay leased if the
   * grace period runs out and are re-queued by the next worker), leave waiting jobs in Redis.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.nudgeTimer) clearTimeout(this.nudgeTimer);
    await this.running?.catch(() => undefined);
    if (this.delivering) await this.queue.pause(true, false).catch((err: Error) => this.logger.warn({ err: err.message }, 'could not drain the delivery queue'));
  }
}
