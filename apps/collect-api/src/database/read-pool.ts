import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { HttpErrorWithHeaders } from '@collect/contracts';
import { CollectConfig } from '../config/collect-config.js';

/** PostgreSQL's SQLSTATE for a statement cancelled (by statement_timeout or pg_cancel_backend). */
const QUERY_CANCELED = '57014';

/** A read that ran past READ_STATEMENT_TIMEOUT_MS: 503 with a message, never a 500. */
export class ReadTimeoutError extends HttpErrorWithHeaders {
  constructor(ms: number) {
    super(503, `The read took longer than the ${ms} ms one statement may take (READ_STATEMENT_TIMEOUT_MS); narrow the query or ask for fewer rows.`, { 'Retry-After': '5' });
  }
}

/**
 * The client of a read left before or while it ran (499, as proxies log a client that closed its
 * request): nothing more is read for it. Its answer reaches no one; the status keeps it apart
 * from server errors in logs and metrics.
 */
export class ReaderGoneError extends HttpErrorWithHeaders {
  constructor() {
    super(499, 'The client closed the request before its read ended.', {});
  }
}

/**
 * The connections of streamed and heavy reads (docs/security.md, "Streamed reads and heavy
 * queries"): a pg pool of its own, READ_POOL_SIZE connections, apart from the pool that
 * submissions and every other request use, so readers can never take those. Each connection
 * carries `statement_timeout` and `idle_in_transaction_session_timeout`: a statement or a cursor's
 * transaction left waiting on a client is ended by PostgreSQL whatever the process does.
 */
@Injectable()
export class ReadPool implements OnModuleDestroy {
  readonly pool: pg.Pool;

  constructor(
    readonly config: CollectConfig,
    @InjectDataSource() private readonly db: DataSource,
  ) {
    this.pool = new pg.Pool({
      connectionString: config.DATABASE_URL,
      max: config.READ_POOL_SIZE,
      statement_timeout: config.READ_STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: config.READ_IDLE_IN_TRANSACTION_MS,
      application_name: 'collect-api reads',
    });
    // A connection PostgreSQL ended (idle_in_transaction_session_timeout) errors while idle in the pool.
    this.pool.on('error', () => undefined);
  }

  /** Cancels the running statement of each backend (a reader that left), on a connection of the main pool. */
  cancel(pids: number[]): void {
    if (pids.length) this.db.query('SELECT pg_cancel_backend(pid) FROM unnest($1::int[]) pid', [pids]).catch(() => undefined);
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** Pooled clients with an `error` listener of their own (added once per client). */
const GUARDED = new WeakSet<pg.PoolClient>();

/** A statement run on a leased connection (the same shape as DataSource.query's rows). */
export type ReadQuery = <T = unknown>(sql: string, params: unknown[]) => Promise<T[]>;

/**
 * One caller's right to a connection of the ReadPool (ReadSlots): statements run one at a time
 * on it, each on a connection taken from the pool and given back after (a cursor keeps one for
 * its transaction, `connect`). `abort` cancels whatever runs, when the client went away.
 */
export class ReadLease {
  private readonly active = new Set<pg.PoolClient>();
  private aborted = false;

  constructor(private readonly reads: ReadPool) {}

  /** One statement on a connection of the read pool. */
  readonly query: ReadQuery = async <T>(sql: string, params: unknown[]): Promise<T[]> => {
    const client = await this.connect();
    try {
      return (await this.run(client, sql, params)) as T[];
    } finally {
      this.done(client);
    }
  };

  /** A connection for a transaction (a cursor); give it back with `done`. */
  async connect(): Promise<pg.PoolClient> {
    if (this.aborted) throw new ReaderGoneError();
    const client = await this.reads.pool.connect();
    // PostgreSQL ending the session while the client is checked out (a cursor left idle past
    // idle_in_transaction_session_timeout) emits `error` on it: the next statement fails instead.
    if (!GUARDED.has(client)) {
      GUARDED.add(client);
      client.on('error', () => undefined);
    }
    this.active.add(client);
    return client;
  }

  /**
   * A statement on a connection from `connect`; a timeout becomes a ReadTimeoutError. Once the
   * client left, no statement runs: the cancel reaches only a statement running at that moment,
   * and a read between two statements (a cursor between its count and its first batch) must stop
   * at the next one, so its caller gives the connection back instead of holding it for output
   * no one takes (docs/security.md, "Streamed reads and heavy queries").
   */
  async run(client: pg.PoolClient, sql: string, params: unknown[] = []): Promise<unknown[]> {
    if (this.aborted) throw new ReaderGoneError();
    try {
      return (await client.query(sql, params)).rows as unknown[];
    } catch (err) {
      if ((err as { code?: string }).code === QUERY_CANCELED) throw this.aborted ? new ReaderGoneError() : new ReadTimeoutError(this.reads.config.READ_STATEMENT_TIMEOUT_MS);
      throw err;
    }
  }

  /** Gives a connection back (closed instead when PostgreSQL may have ended its session). */
  done(client: pg.PoolClient, broken = false): void {
    this.active.delete(client);
    client.release(broken || this.aborted);
  }

  /** The client went away: cancel every running statement of this lease. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reads.cancel([...this.active].map((c) => (c as unknown as { processID: number }).processID).filter(Boolean));
  }
}
