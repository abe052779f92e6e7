import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import type { HttpRequest as Request } from '../http-types.js';
import { TooManyRequestsError, UnauthorizedError } from '@collect/contracts';
import { UsersService } from '../../users/users.service.js';
import { decodeBasic, WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { LoginLockoutService } from '../login-lockout.service.js';
import { credentialsOf } from './credentials.js';

/** `Authorization: Basic base64(username:password)`, with the per-user lockout. */
@Injectable()
export class BasicStrategy extends PassportStrategy(Strategy, 'collect-basic') {
  constructor(
    private readonly users: UsersService,
    private readonly lockout: LoginLockoutService,
  ) {
    super();
  }

  async validate(req: Request): Promise<AuthenticatedUser> {
    const pair = decodeBasic(credentialsOf(req));
    if (!pair) throw new UnauthorizedError('Invalid basic header. Credentials not correctly base64 encoded.', WWW_AUTHENTICATE.basic);
    const retryAfter = await this.lockout.retryAfter(pair.username);
    if (retryAfter > 0) throw new TooManyRequestsError('Too many failed login attempts. Try again later.', retryAfter);
    const user = await this.users.verifyCredentials(pair.username, pair.password);
    if (!user) {
      await this.lockout.recordFailure(pair.username, 'basic');
      throw new UnauthorizedError('Invalid username/password.', WWW_AUTHENTICATE.basic);
    }
    if (!user.isActive) throw new UnauthorizedError('User inactive or deleted.', WWW_AUTHENTICATE.basic);
    await this.lockout.reset(pair.username);
    return { id: user.id, username: user.username, isSuperuser: user.isSuperuser, scheme: 'basic' };
  }
}
