import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import pg from 'pg';
import { CollectConfig } from '../../config/collect-config.js';
import { DELIVERY_CHANNEL } from './delivery-outbox.js';
import { DeliveryService } from './delivery.service.js';

/** Upper bound of one claim; the free send slots (FORWARD_CONCURRENCY) bound it first. */
const BATCH = 500;
const NUDGE_DELAY_MS = 5;
const RELISTEN_DELAY_MS = 1_000;

/**
 * Outbox → sends, in the worker process only. The API NOTIFYs after an outbox commit and the
 * relay LISTENs, so a new row is claimed within milliseconds; the poll every
 * FORWARD_RELAY_INTERVAL_MS stays as the fallback and finds due retries and rows whose lease
 * ran out (a killed worker). Each pass claims due rows straight from PostgreSQL (pending →
 * sending in one statement, as many as there are free send slots) and hands them to
 * DeliveryService, with no queue in between: a Bull job per batch and the `queued` state
 * were most of a delivery's Redis and WAL (docs/restservices.md,
 * "Connections and batches (the worker's hot path)").
 */
@Injectable()
export class DeliveryRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRelay.name);
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private nudgeTimer: NodeJS.Timeout | null = null;
  private listener: pg.Client | null = null;
  private readonly stopping = new AbortController();
  /** Rows the last pass claimed: a pass that found one row or none means no burst to gather. */
  private lastClaimed = 0;

  constructor(
    private readonly delivery: DeliveryService,
    private readonly config: CollectConfig,
  ) {}

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

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

  /** Sends due rows soon; calls while a pass runs fold into one more pass. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.nudgeTimer) return;
    // Under load a few milliseconds fold the commits of concurrent submissions into one relay
    // pass (one claim for several rows); when the last pass found a single row there is
    // nothing to gather, and waiting would only add to each delivery's latency.
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
          this.lastClaimed = 0;
          let got: { asked: number; claimed: number };
          // A claim that filled every slot it asked for may have left due rows behind: claim
          // again as slots come free.
          let backlog = false;
          do {
            got = await this.delivery.sendDue(BATCH, this.stopping.signal, { backlog });
            this.lastClaimed += got.claimed;
            backlog = true;
          } while (got.claimed > 0 && got.claimed === got.asked && !this.stopped);
        } while (this.again && !this.stopped);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'delivery relay pass failed; will retry');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** SIGTERM: no new claims; the attempts in flight finish (their requests get their answers). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    if (this.nudgeTimer) clearTimeout(this.nudgeTimer);
    await this.listener?.end().catch(() => undefined);
    await this.running?.catch(() => undefined);
    await this.delivery.drain();
  }
}
