import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import { LoginFailuresRepository } from './login-failures.repository.js';

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; reason: 'user' | 'address' };

/**
 * Brute-force protection for the login page: after CAS_LOGIN_MAX_FAILURES_PER_USER failures for
 * a username, or CAS_LOGIN_MAX_FAILURES_PER_IP from one address, within CAS_LOGIN_WINDOW_SECONDS,
 * further attempts are refused without checking the password until the window moves on.
 * Counted in PostgreSQL so every instance sees the same numbers.
 */
@Injectable()
export class LoginThrottleService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('login');
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(CAS_CONFIG) private readonly config: CasConfig,
    private readonly failures: LoginFailuresRepository,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.failures.deleteOlderThan(this.windowStart()).catch(() => undefined), 60_000);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async check(username: string, ip: string): Promise<ThrottleVerdict> {
    const since = this.windowStart();
    const [byUser, byIp] = await Promise.all([
      this.failures.countSince('username', key(username), since),
      this.failures.countSince('ip', ip, since),
    ]);
    const over = (w: { count: number; oldest: Date | null }, max: number) => (w.count >= max ? this.retryAfter(w.oldest) : 0);
    const userWait = over(byUser, this.config.CAS_LOGIN_MAX_FAILURES_PER_USER);
    const ipWait = over(byIp, this.config.CAS_LOGIN_MAX_FAILURES_PER_IP);
    if (!userWait && !ipWait) return { allowed: true };
    const reason = userWait ? 'user' : 'address';
    this.logger.warn({ event: 'login.locked', username: key(username), ip, reason });
    return { allowed: false, retryAfterSeconds: Math.max(userWait, ipWait), reason };
  }

  async failed(username: string, ip: string): Promise<void> {
    await this.failures.record(key(username), ip);
    this.logger.warn({ event: 'login.failure', username: key(username), ip });
  }

  async succeeded(username: string, ip: string, accountId: string): Promise<void> {
    await this.failures.clearUser(key(username));
    this.logger.log({ event: 'login.success', user_id: accountId, ip });
  }

  private windowStart(): Date {
    return new Date(Date.now() - this.config.CAS_LOGIN_WINDOW_SECONDS * 1000);
  }

  private retryAfter(oldest: Date | null): number {
    const until = (oldest ? new Date(oldest).getTime() : Date.now()) + this.config.CAS_LOGIN_WINDOW_SECONDS * 1000;
    return Math.max(1, Math.ceil((until - Date.now()) / 1000));
  }
}

/** Case variants of one username share a counter. */
function key(username: string): string {
  return username.trim().toLowerCase().slice(0, 150);
}
