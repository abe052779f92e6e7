import { Inject, Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import { WorkLimiter } from '@collect/platform';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';

/**
 * argon2id with OWASP's second recommended profile (19 MiB, t=2, p=1): memory-hard, yet fast
 * enough (~30 ms here) that a login page stays responsive.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Every hash and verification goes through one WorkLimiter: PASSWORD_HASH_CONCURRENCY at once,
 * PASSWORD_HASH_QUEUE waiting, the rest refused at once with WorkLimiterFullError (the login
 * page answers 503): anonymous sign-in attempts hold at most that much CPU and memory.
 */
@Injectable()
export class PasswordHasher {
  private readonly limiter: WorkLimiter;

  constructor(@Inject(CAS_CONFIG) config: CasConfig) {
    this.limiter = new WorkLimiter('password-hashing', config.PASSWORD_HASH_CONCURRENCY, config.PASSWORD_HASH_QUEUE);
  }

  hash(password: string): Promise<string> {
    return this.limiter.run(() => argon2.hash(password, OPTIONS));
  }

  async verify(hash: string | null, password: string): Promise<boolean> {
    if (!hash) return false;
    return this.limiter.run(async () => {
      try {
        return await argon2.verify(hash, password);
      } catch {
        return false; // a malformed stored hash is a failed login, not a 500
      }
    });
  }

  /** A hash of a random string: verifying against it costs the same as a real user, so unknown usernames do not answer faster. */
  private decoy?: Promise<string>;
  async burnTime(password: string): Promise<void> {
    this.decoy ??= argon2.hash(`decoy-${Math.random()}`, OPTIONS);
    await this.verify(await this.decoy, password);
  }
}
