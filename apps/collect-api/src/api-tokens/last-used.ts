import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { ApiTokensRepository } from './api-tokens.repository.js';

/**
 * `last_used_at` of personal tokens without a write per request (docs/auth.md, "Personal access
 * tokens"): a use is noted in memory (one map entry per token, the latest instant), and every
 * API_TOKEN_LAST_USED_FLUSH_MS the process writes all of them in one statement, and once more
 * at shutdown. A listing also folds in this process's notes not yet written, so what it shows
 * is at most one flush interval (plus one write) behind any replica.
 */
@Injectable()
export class LastUsedBatch implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('PersonalTokenLastUsed');
  private pending = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: ApiTokensRepository,
    @Inject(COLLECT_CONFIG) private readonly config: Pick<CollectConfig, 'API_TOKEN_LAST_USED_FLUSH_MS'>,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), this.config.API_TOKEN_LAST_USED_FLUSH_MS);
    this.timer.unref();
  }

  /** Before the database connections close (TypeORM closes them in onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Notes a use of the token now. */
  touch(tokenId: number): void {
    this.pending.set(tokenId, Date.now());
  }

  /** The instant of this process's latest use of the token not yet written, if any. */
  unwritten(tokenId: number): Date | null {
    const at = this.pending.get(tokenId);
    return at === undefined ? null : new Date(at);
  }

  /** Writes the noted uses (one statement); a failed write keeps them for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.pending.size) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.repo.recordUses(new Map([...batch].map(([id, at]) => [id, new Date(at)])));
      } catch (err) {
        for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
        this.logger.warn({ event: 'personal_tokens.last_used_flush_failed', error: err instanceof Error ? err.message : String(err) });
      }
    });
    return this.flushing;
  }
}
