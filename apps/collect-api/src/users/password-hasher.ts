import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import { HttpErrorWithHeaders } from '@collect/contracts';
import { WorkLimiter, WorkLimiterFullError } from '@collect/platform';
import { CollectConfig } from '../config/collect-config.js';

/**
 * argon2id with the OWASP minimum profile (19 MiB, 2 passes, 1 lane): memory-hard, and about
 * 50 ms here, so a Basic login stays affordable while offline guessing stays expensive.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** 503 + Retry-After when every hashing slot and the queue are taken. */
export class PasswordHashingBusyError extends HttpErrorWithHeaders {
  constructor() {
    super(503, 'The server is busy checking passwords; try again shortly.', { 'Retry-After': '1' });
  }
}

/**
 * Every password hash and verification of the process goes through one WorkLimiter:
 * PASSWORD_HASH_CONCURRENCY at once (libuv runs argon2 on its 4 threads), PASSWORD_HASH_QUEUE
 * waiting, the rest refused with 503 at once. Anonymous requests (Basic guesses, registration)
 * can thus hold at most that much CPU and memory (docs/security.md "Bounded work").
 */
@Injectable()
export class PasswordHasher {
  private readonly limiter: WorkLimiter;
  /** Hash of a random string: an unknown username costs the same as a known one. */
  private decoy?: Promise<string>;

  constructor(config: CollectConfig) {
    this.limiter = new WorkLimiter('password-hashing', config.PASSWORD_HASH_CONCURRENCY, config.PASSWORD_HASH_QUEUE);
  }

  hash(password: string): Promise<string> {
    return this.limited(() => argon2.hash(password, OPTIONS));
  }

  async verify(hash: string | null, password: string): Promise<boolean> {
    // Spend the same time on unknown users, so response time does not reveal which names exist.
    this.decoy ??= argon2.hash(`decoy-${Math.random()}`, OPTIONS);
    const against = hash ?? (await this.decoy);
    return this.limited(async () => {
      try {
        return (await argon2.verify(against, password)) && hash !== null;
      } catch {
        return false;
      }
    });
  }

  private async limited<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await this.limiter.run(task);
    } catch (err) {
      if (err instanceof WorkLimiterFullError) throw new PasswordHashingBusyError();
      throw err;
    }
  }
}
