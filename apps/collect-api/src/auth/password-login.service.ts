import { Injectable } from '@nestjs/common';
import type { UserEntity } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { AuthThrottleService, type AttemptRefusal } from './auth-throttle.service.js';

export type PasswordLoginResult =
  | { kind: 'ok'; user: UserEntity }
  | { kind: 'locked'; retryAfter: number; reason: AttemptRefusal }
  | { kind: 'invalid' }
  | { kind: 'inactive' };

/**
 * A username + password login with the lockout rules, shared by Basic authentication and the
 * /o/ login page. The attempt is counted first (atomically, AuthThrottleService) and refused
 * when over a limit, so the password is checked at most the limit's times whatever the
 * concurrency; a success gives the attempt back and clears the user's failures.
 */
@Injectable()
export class PasswordLoginService {
  constructor(
    private readonly users: UsersService,
    private readonly throttle: AuthThrottleService,
  ) {}

  async login(username: string, password: string, via: 'basic' | 'login', ip: string): Promise<PasswordLoginResult> {
    // No stored username holds a NUL and PostgreSQL cannot compare one (it answered 500 for a
    // Basic header that decodes to one; found by fuzzing): such credentials are simply wrong.
    if (username.includes('\u0000')) return { kind: 'invalid' };
    const verdict = await this.throttle.beginPasswordAttempt(username, ip, via);
    if (!verdict.allowed) return { kind: 'locked', retryAfter: verdict.retryAfter, reason: verdict.reason };
    const user = await this.users.verifyCredentials(username, password);
    if (!user) {
      this.throttle.failedPassword(username, via);
      return { kind: 'invalid' };
    }
    if (!user.isActive) return { kind: 'inactive' };
    await this.throttle.succeededPassword(username, ip);
    return { kind: 'ok', user };
  }
}
