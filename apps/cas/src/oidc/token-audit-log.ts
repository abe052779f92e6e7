import { baseLoggerOptions } from '@collect/platform';
import { pino, type Logger as PinoLogger } from 'pino';

/**
 * The `token.issued` audit line is written once per token, so on the token hot path it goes
 * through its own pino instance with an asynchronous destination: lines written while a write
 * is in flight are batched into the next one instead of costing a syscall each. Same JSON
 * shape and redaction as every other log line; flushed on shutdown.
 */
export class TokenAuditLog {
  private readonly destination = pino.destination({ fd: 1, sync: false });
  private readonly log: PinoLogger;

  constructor(level: string) {
    this.log = pino({ ...baseLoggerOptions('cas', level), base: { service: 'cas', context: 'oidc' } }, this.destination);
  }

  issued(line: Record<string, unknown>): void {
    this.log.info({ event: 'token.issued', ...line });
  }

  flush(): void {
    try {
      this.destination.flushSync();
    } catch {
      // not yet open / already closed: nothing buffered to lose
    }
  }
}
