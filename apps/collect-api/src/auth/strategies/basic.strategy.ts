import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import { TooManyRequestsError, UnauthorizedError } from '@collect/contracts';
import { decodeBasic, WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { AuthThrottleService } from '../auth-throttle.service.js';
import { requestAddress, type HttpRequest as Request } from '../http-types.js';
import { PasswordLoginService } from '../password-login.service.js';
import { credentialsOf } from './credentials.js';

/** `Authorization: Basic base64(username:password)`, with the per-user lockout. */
@Injectable()
export class BasicStrategy extends PassportStrategy(Strategy, 'collect-basic') {
  constructor(
    private readonly logins: PasswordLoginService,
    private readonly throttle: AuthThrottleService,
  ) {
    super();
  }

  async validate(req: Request): Promise<AuthenticatedUser> {
    const pair = decodeBasic(credentialsOf(req));
    if (!pair) {
      await this.throttle.failedOther(requestAddress(req));
      throw new UnauthorizedError('Invalid basic header. Credentials not correctly base64 encoded.', WWW_AUTHENTICATE.basic);
    }
    const result = await this.logins.login(pair.username, pair.password, 'basic', requestAddress(req));
    switch (result.kind) {
      case 'locked':
        throw new TooManyRequestsError('Too many failed login attempts. Try again later.', result.retryAfter);
      case 'invalid':
        throw new UnauthorizedError('Invalid username/password.', WWW_AUTHENTICATE.basic);
      case 'inactive':
        throw new UnauthorizedError('User inactive or deleted.', WWW_AUTHENTICATE.basic);
      case 'ok':
        return { id: result.user.id, username: result.user.username, isSuperuser: result.user.isSuperuser, scheme: 'basic' };
    }
  }
}
