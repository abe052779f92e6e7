import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy as HttpBasicStrategy } from 'passport-http';
import { TooManyRequestsError, UnauthorizedError } from '@collect/contracts';
import { decodeBasic, WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { requestAddress, type HttpRequest as Request } from '../http-types.js';
import { PasswordLoginService } from '../password-login.service.js';
import { credentialsOf } from './credentials.js';

/**
 * `Authorization: Basic base64(username:password)`, with the per-user lockout. The AuthGuard calls
 * `validate` directly, after the checks passport-http's BasicStrategy makes first (auth-header.ts
 * basicUserid) and after refusing a credential that is not base64.
 */
@Injectable()
export class BasicStrategy extends PassportStrategy(HttpBasicStrategy, 'collect-basic') {
  constructor(private readonly logins: PasswordLoginService) {
    super({ passReqToCallback: true, realm: 'api' });
  }

  async validate(req: Request, username: string): Promise<AuthenticatedUser> {
    // passport-http 0.3 splits the decoded pair on every ':' and passes the second piece only;
    // RFC 7617 lets a password hold ':', so it is everything after the first colon of the header.
    const password = decodeBasic(credentialsOf(req))?.password ?? '';
    const result = await this.logins.login(username, password, 'basic', requestAddress(req));
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
