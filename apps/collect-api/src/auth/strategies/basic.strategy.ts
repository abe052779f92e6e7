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
        throw new TooManyRequestsError(refusalDetail(result.reason), result.retryAfter);
      case 'invalid':
        throw new UnauthorizedError('Invalid username/password.', WWW_AUTHENTICATE.basic);
      case 'inactive':
        throw new UnauthorizedError('User inactive or deleted.', WWW_AUTHENTICATE.basic);
      case 'ok':
        return { id: result.user.id, username: result.user.username, isSuperuser: result.user.isSuperuser, scheme: 'basic' };
    }
  }
}

/**
 * What a Basic client is told when a limit refuses it: which limit, and (for the request-rate
 * limits, which successful logins count too) that a token is not counted by them
 * (docs/security.md, "Rate limits, quotas and forwarding input").
 */
export function refusalDetail(reason: 'lockout' | 'address' | 'basic-ip' | 'basic-user'): string {
  const useToken = ' A token (Authorization: Bearer or Token) is not counted by this limit: get one once and use it for repeated requests.';
  switch (reason) {
    case 'lockout':
      return 'Too many failed login attempts. Try again later.';
    case 'address':
      return 'Too many failed authentication attempts from your address. Try again later.';
    case 'basic-user':
      return `Too many Basic-authenticated requests for this username, successful ones included (the per-username request limit). Try again later.${useToken}`;
    case 'basic-ip':
      return `Too many Basic-authenticated requests from your address, successful ones included (the per-address request limit). Try again later.${useToken}`;
  }
}
