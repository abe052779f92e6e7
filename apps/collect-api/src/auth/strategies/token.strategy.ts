import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import type { HttpRequest as Request } from '../http-types.js';
import { UnauthorizedError } from '@collect/contracts';
import { UserTokensService } from '../../users/user-tokens.service.js';
import { WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { credentialsOf } from './credentials.js';

/**
 * The caller a per-user key names: `Token` keys live in `api_tokens`, `TempToken` keys in
 * `temp_tokens` and also expire. Shared by TokenStrategy and TempTokenStrategy.
 */
export async function userKeyCaller(tokens: UserTokensService, req: Request, scheme: 'token' | 'temptoken'): Promise<AuthenticatedUser> {
  const owner = await tokens.resolve(scheme === 'token' ? 'api_tokens' : 'temp_tokens', credentialsOf(req));
  if (!owner) throw new UnauthorizedError('Invalid token.', WWW_AUTHENTICATE[scheme]);
  if (!owner.isActive) throw new UnauthorizedError('User inactive or deleted.', WWW_AUTHENTICATE[scheme]);
  if (scheme === 'temptoken' && tokens.isTempTokenExpired(owner)) throw new UnauthorizedError('Token expired', WWW_AUTHENTICATE[scheme]);
  return { id: owner.userId, username: owner.username, isSuperuser: owner.isSuperuser, scheme };
}

/** `Authorization: Token <API_KEY>`. */
@Injectable()
export class TokenStrategy extends PassportStrategy(Strategy, 'collect-token') {
  constructor(private readonly tokens: UserTokensService) {
    super();
  }

  validate(req: Request): Promise<AuthenticatedUser> {
    return userKeyCaller(this.tokens, req, 'token');
  }
}
