import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import { LoginAttemptsRepository } from './login-attempts.repository.js';

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; reason: 'user' | 'address' };

/**
 * Brute-force protection for the login page: at most CAS_LOGIN_MAX_FAILURES_PER_USER failed
 * attempts for a username, and CAS_LOGIN_MAX_FAILURES_PER_IP from one address, per
 * CAS_LOGIN_WINDOW_SECONDS; further attempts are refused without checking the password until
 * the window ends. Count first: `begin` adds the attempt and answers in one statement, before
 * the password is checked, so parallel guesses get at most the limit's worth of checks; a
 * success takes the attempt back (`succeeded`). Counted in PostgreSQL so every instance sees
 * the same numbers.
 */
@Injectable()
export class LoginThrottleService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('login');
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(CAS_CONFIG) private readonly config: CasConfig,
    private readonly attempts: LoginAttemptsRepository,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.attempts.deleteExpired().catch(() => undefined), 60_000);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Counts the attempt; refused when the username or the address is over its limit. */
  async begin(username: string, ip: string): Promise<ThrottleVerdict> {
    const [user, address] = await this.attempts.count([userKey(username), ipKey(ip)], this.config.CAS_LOGIN_WINDOW_SECONDS);
    const userOver = user.attempts > this.config.CAS_LOGIN_MAX_FAILURES_PER_USER;
    const addressOver = address.attempts > this.config.CAS_LOGIN_MAX_FAILURES_PER_IP;
    if (!userOver && !addressOver) return { allowed: true };
    const reason = userOver ? 'user' : 'address';
    this.logger.warn({ event: 'login.locked', username: key(username), ip, reason });
    const wait = Math.max(userOver ? user.secondsLeft : 0, addressOver ? address.secondsLeft : 0);
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)), reason };
  }

  /** A wrong password: its attempt stays counted. */
  failed(username: string, ip: string): void {
    this.logger.warn({ event: 'login.failure', username: key(username), ip });
  }

  async succeeded(username: string, ip: string, accountId: string): Promise<void> {
    await this.attempts.succeeded(userKey(username), ipKey(ip));
    this.logger.log({ event: 'login.success', user_id: accountId, ip });
  }
}

/** Case variants of one username share a counter. */
function key(username: string): string {
  return username.trim().toLowerCase().slice(0, 150);
}

const userKey = (username: string) => `user:${key(username)}`;
const ipKey = (ip: string) => `ip:${ip}`;
