import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import type { HttpRequest as Request } from '../http-types.js';
import { UserTokensService } from '../../users/user-tokens.service.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { userKeyCaller } from './token.strategy.js';

/** `Authorization: TempToken <TEMP_TOKEN>`, valid DEFAULT_TEMP_TOKEN_EXPIRY_TIME seconds. */
@Injectable()
export class TempTokenStrategy extends PassportStrategy(Strategy, 'collect-temptoken') {
  constructor(private readonly tokens: UserTokensService) {
    super();
  }

  validate(req: Request): Promise<AuthenticatedUser> {
    return userKeyCaller(this.tokens, req, 'temptoken');
  }
}
