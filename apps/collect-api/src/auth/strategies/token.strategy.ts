import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import type { HttpRequest as Request } from '../http-types.js';
import { UnauthorizedError } from '@collect/contracts';
import { UserTokensService } from '../../users/user-tokens.service.js';
import { WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { credentialsOf } from './credentials.js';

/** `Authorization: Token <API_KEY>`. */
@Injectable()
export class TokenStrategy extends PassportStrategy(Strategy, 'collect-token') {
  constructor(private readonly tokens: UserTokensService) {
    super();
  }

  async validate(req: Request): Promise<AuthenticatedUser> {
    const owner = await this.tokens.resolve('api_tokens', credentialsOf(req));
    if (!owner) throw new UnauthorizedError('Invalid token.', WWW_AUTHENTICATE.token);
    if (!owner.isActive) throw new UnauthorizedError('User inactive or deleted.', WWW_AUTHENTICATE.token);
    return { id: owner.userId, username: owner.username, isSuperuser: owner.isSuperuser, scheme: 'token' };
  }
}
