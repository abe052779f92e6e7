import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as HttpBearerStrategy } from 'passport-http-bearer';
import { UnauthorizedError } from '@collect/contracts';
import { WWW_AUTHENTICATE } from '../auth-header.js';
import type { AuthenticatedUser } from '../authenticated-user.js';
import { BearerResolvers } from '../bearer-resolvers.js';

/**
 * `Authorization: Bearer <ACCESS_TOKEN>`; each registered token source (local /o/ tokens, CAS JWTs)
 * is asked in turn. The AuthGuard calls `validate` directly, only for a Bearer header and after
 * the checks passport-http-bearer makes first (auth-header.ts bearerToken), so a token in a query
 * string or body is not used (RFC 6750 §2.3 allows it, but it ends up in logs); with one beside
 * the header the request is refused (§2: one method only).
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(HttpBearerStrategy, 'collect-bearer') {
  constructor(private readonly resolvers: BearerResolvers) {
    super();
  }

  async validate(token: string): Promise<AuthenticatedUser> {
    const user = await this.resolvers.resolve(token);
    if (!user) throw new UnauthorizedError('Invalid token.', WWW_AUTHENTICATE.bearer);
    return user;
  }
}
