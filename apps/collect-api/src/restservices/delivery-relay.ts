import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import pg from 'pg';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { JobQueue } from '../jobs/job-queue.js';
import { DELIVERY_CHANNEL } from './delivery-outbox.js';
import { RestServicesRepository } from './restservices.repository.js';

const BATCH = 500;
const NUDGE_DELAY_MS = 5;
const RELISTEN_DELAY_MS = 1_000;

/**
 * Outbox → Bull, in the worker process only. The API NOTIFYs after an outbox commit and the
 * relay LISTENs, so a new row is claimed within milliseconds; the poll every
 * FORWARD_RELAY_INTERVAL_MS stays as the fallback and finds due retries and rows whose lease
 * ran out (lost Redis job, killed worker). Rows are claimed in batches and go onto the queue
 * as jobs of up to FORWARD_CONCURRENCY rows each (what one worker sends at once), added with
 * one addBulk: a Bull job costs about twenty Redis commands, so one per row was most of the
 * queue's cost (docs/benchmarks.md, "Forwarding (issue 20, session 4)").
 */
@Injectable()
export class DeliveryRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRelay.name);
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private nudgeTimer: NodeJS.Timeout | null = null;
  private listener: pg.Client | null = null;
  private stopped = false;
  /** Rows the last pass claimed: a pass that found one row or none means no burst to gather. */
  private lastClaimed = 0;

  constructor(
    private readonly repo: RestServicesRepository,
    private readonly jobs: JobQueue,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.listen();
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.tick().finally(loop), this.config.FORWARD_RELAY_INTERVAL_MS);
    };
    this.nudge();
    loop();
  }

  /** A dedicated connection (a pooled one could not keep LISTEN); reconnects after a loss. */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.config.DATABASE_URL });
    let retried = false;
    const retry = () => {
      if (retried) return;
      retried = true;
      if (this.listener === client) this.listener = null;
      void client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen(), RELISTEN_DELAY_MS).unref();
    };
    client.on('error', (err) => {
      this.logger.warn({ err: err.message }, 'outbox LISTEN connection lost; polling until it is back');
      retry();
    });
    client.on('end', retry);
    client.on('notification', () => this.nudge());
    try {
      await client.connect();
      await client.query(`LISTEN ${DELIVERY_CHANNEL}`);
      this.listener = client;
      if (this.stopped) return void (await client.end());
      this.nudge(); // rows committed while nobody listened
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not LISTEN for outbox rows; polling until it works');
      retry();
    }
  }

  /** Moves due rows onto the queue soon; calls while a pass runs fold into one more pass. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.nudgeTimer) return;
    // Under load a few milliseconds fold the commits of concurrent submissions into one relay
    // pass (one claim, one job for several rows); when the last pass found a single row there
    // is nothing to gather, and waiting would only add to each delivery's latency.
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = null;
      void this.tick();
    }, this.lastClaimed > 1 ? NUDGE_DELAY_MS : 0);
  }

  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        do {
          this.again = false;
          let claimed: number[];
          this.lastClaimed = 0;
          do {
            claimed = await this.repo.claimForQueue(BATCH, this.config.FORWARD_LEASE_MS);
            this.lastClaimed += claimed.length;
            // If Redis is down this throws; the rows stay leased and are claimed again after FORWARD_LEASE_MS.
            if (claimed.length) await this.jobs.addBulk(chunks(claimed, this.config.FORWARD_CONCURRENCY).map((rowIds) => ({ name: 'deliver' as const, data: { rowIds } })));
          } while (claimed.length === BATCH && !this.stopped);
        } while (this.again && !this.stopped);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'delivery relay pass failed; will retry');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** SIGTERM: no new passes; the pass running finishes (the job worker drains the queue). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.nudgeTimer) clearTimeout(this.nudgeTimer);
    await this.listener?.end().catch(() => undefined);
    await this.running?.catch(() => undefined);
  }
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
