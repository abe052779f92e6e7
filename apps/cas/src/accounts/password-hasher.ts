import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

/**
 * argon2id with OWASP's second recommended profile (19 MiB, t=2, p=1): memory-hard, yet fast
 * enough (~30 ms here) that a login page stays responsive.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

@Injectable()
export class PasswordHasher {
  hash(password: string): Promise<string> {
    return argon2.hash(password, OPTIONS);
  }

  async verify(hash: string | null, password: string): Promise<boolean> {
    if (!hash) return false;
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false; // a malformed stored hash is a failed login, not a 500
    }
  }

  /** A hash of a random string: verifying against it costs the same as a real user, so unknown usernames do not answer faster. */
  private decoy?: Promise<string>;
  async burnTime(password: string): Promise<void> {
    this.decoy ??= this.hash(`decoy-${Math.random()}`);
    await this.verify(await this.decoy, password);
  }
}
