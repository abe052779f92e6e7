import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import type { HttpRequest as Request } from '../http-types.js';
import { UnauthorizedError } from '@collect/contracts';
import { WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { BearerResolvers } from '../bearer-resolvers.js';
import { credentialsOf } from './credentials.js';

/** `Authorization: Bearer <ACCESS_TOKEN>`: asks each registered token source in turn. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'collect-bearer') {
  constructor(private readonly resolvers: BearerResolvers) {
    super();
  }

  async validate(req: Request): Promise<AuthenticatedUser> {
    const user = await this.resolvers.resolve(credentialsOf(req));
    if (!user) throw new UnauthorizedError('Invalid token.', WWW_AUTHENTICATE.bearer);
    return user;
  }
}
