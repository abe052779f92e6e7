import { Injectable } from '@nestjs/common';
import type { UserEntity } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { LoginLockoutService } from './login-lockout.service.js';

export type PasswordLoginResult =
  | { kind: 'ok'; user: UserEntity }
  | { kind: 'locked'; retryAfter: number }
  | { kind: 'invalid' }
  | { kind: 'inactive' };

/**
 * A username + password login with the lockout rules, shared by Basic authentication and the
 * /o/ login page: a locked-out user is refused before the password is checked, a wrong
 * password counts a failure, a success clears the count.
 */
@Injectable()
export class PasswordLoginService {
  constructor(
    private readonly users: UsersService,
    private readonly lockout: LoginLockoutService,
  ) {}

  async login(username: string, password: string, via: string): Promise<PasswordLoginResult> {
    // No stored username holds a NUL and PostgreSQL cannot compare one (it answered 500 for a
    // Basic header that decodes to one; found by fuzzing): such credentials are simply wrong.
    if (username.includes('\u0000')) return { kind: 'invalid' };
    const retryAfter = await this.lockout.retryAfter(username);
    if (retryAfter > 0) return { kind: 'locked', retryAfter };
    const user = await this.users.verifyCredentials(username, password);
    if (!user) {
      await this.lockout.recordFailure(username, via);
      return { kind: 'invalid' };
    }
    if (!user.isActive) return { kind: 'inactive' };
    await this.lockout.reset(username);
    return { kind: 'ok', user };
  }
}
