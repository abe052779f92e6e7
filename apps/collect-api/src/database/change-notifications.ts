import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';

/** The channel the triggers of migration 1764700000000 notify on. */
export const CHANGES_CHANNEL = 'collect_changes';

/** Called with the rest of a payload `<topic>:<rest>` (e.g. topic `form`, rest `12:bench`). */
export type ChangeHandler = (rest: string) => void;

const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5_000;

/**
 * Row changes of the tables whose rows processes cache (forms, form_roles, users), told to
 * every process at once: triggers `pg_notify` the channel when a transaction changes such a
 * row, and PostgreSQL delivers the payload to every listener when that transaction commits
 * (never for a rolled-back one). Each process holds one dedicated connection that LISTENs
 * (outside the pool: a LISTEN connection must stay open and idle).
 *
 * A cache may only serve entries while `live` is true: while the connection is down changes
 * would be missed, so every reset handler drops everything, and after reconnecting the caches
 * start empty again (docs/forms.md, "Intake: caches and one statement").
 */
@Injectable()
export class ChangeNotifications implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeNotifications.name);
  private readonly handlers = new Map<string, ChangeHandler[]>();
  private readonly resetHandlers: Array<() => void> = [];
  private client: pg.Client | null = null;
  private connected = false;
  private stopped = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(@Inject(COLLECT_CONFIG) private readonly config: Pick<CollectConfig, 'DATABASE_URL'>) {}

  /** True while changes are being received: caches serve entries only then. */
  get live(): boolean {
    return this.connected;
  }

  /** `handler(rest)` for every payload `<topic>:<rest>`. */
  on(topic: string, handler: ChangeHandler): void {
    this.handlers.set(topic, [...(this.handlers.get(topic) ?? []), handler]);
  }

  /** Called whenever notifications may have been missed (connection lost or re-established). */
  onReset(handler: () => void): void {
    this.resetHandlers.push(handler);
  }

  async onModuleInit(): Promise<void> {
    // Start-up does not wait for, or fail on, the listener: without it caches are bypassed.
    await this.connect().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    this.down();
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.config.DATABASE_URL, application_name: 'collect-changes' });
    this.client = client;
    client.on('notification', (msg) => {
      if (msg.channel === CHANGES_CHANNEL && msg.payload) this.dispatch(msg.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (err) {
      this.lost(client, err as Error);
      throw err;
    }
    if (this.client !== client) return;
    this.connected = true;
    this.retryMs = RECONNECT_MIN_MS;
    this.reset();
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    this.down();
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn({ err: err?.message }, 'change notifications lost; caches bypassed until reconnected');
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().catch(() => undefined);
    }, wait);
    this.retryTimer.unref();
  }

  private down(): void {
    this.connected = false;
    this.reset();
  }

  private reset(): void {
    for (const handler of this.resetHandlers) handler();
  }

  private dispatch(payload: string): void {
    const colon = payload.indexOf(':');
    const topic = colon < 0 ? payload : payload.slice(0, colon);
    for (const handler of this.handlers.get(topic) ?? []) {
      try {
        handler(colon < 0 ? '' : payload.slice(colon + 1));
      } catch (err) {
        this.logger.error({ err, payload }, 'change handler failed');
      }
    }
  }
}
