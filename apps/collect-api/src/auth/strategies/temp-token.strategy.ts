import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import type { HttpRequest as Request } from '../http-types.js';
import { UnauthorizedError } from '@collect/contracts';
import { UserTokensService } from '../../users/user-tokens.service.js';
import { WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { credentialsOf } from './credentials.js';

/** `Authorization: TempToken <TEMP_TOKEN>`, valid DEFAULT_TEMP_TOKEN_EXPIRY_TIME seconds. */
@Injectable()
export class TempTokenStrategy extends PassportStrategy(Strategy, 'collect-temptoken') {
  constructor(private readonly tokens: UserTokensService) {
    super();
  }

  async validate(req: Request): Promise<AuthenticatedUser> {
    const owner = await this.tokens.resolve('temp_tokens', credentialsOf(req));
    if (!owner) throw new UnauthorizedError('Invalid token.', WWW_AUTHENTICATE.temptoken);
    if (!owner.isActive) throw new UnauthorizedError('User inactive or deleted.', WWW_AUTHENTICATE.temptoken);
    if (this.tokens.isTempTokenExpired(owner)) throw new UnauthorizedError('Token expired', WWW_AUTHENTICATE.temptoken);
    return { id: owner.userId, username: owner.username, isSuperuser: owner.isSuperuser, scheme: 'temptoken' };
  }
}
