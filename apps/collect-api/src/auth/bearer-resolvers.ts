import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from './authenticated-user.js';

/**
 * A source of Bearer tokens. The local OAuth 2.0 provider (/o/token) is one; CAS-issued JWTs
 * plug in as another: a module registers its resolver in `onModuleInit` with
 * `BearerResolvers.register(...)`.
 */
export interface BearerTokenResolver {
  /** Short name for logs. */
  readonly name: string;
  /**
   * The caller for a token of this source. Return null when the token is not one of this
   * source's (the next resolver is tried); throw an UnauthorizedError for one of this source's
   * that is invalid or expired, to name the reason.
   */
  resolve(token: string): Promise<AuthenticatedUser | null>;
}

@Injectable()
export class BearerResolvers {
  private readonly resolvers: BearerTokenResolver[] = [];

  register(resolver: BearerTokenResolver): void {
    if (!this.resolvers.some((r) => r.name === resolver.name)) this.resolvers.push(resolver);
  }

  list(): readonly BearerTokenResolver[] {
    return this.resolvers;
  }

  /** The first resolver that recognises the token decides; null when none does. */
  async resolve(token: string): Promise<AuthenticatedUser | null> {
    for (const resolver of this.resolvers) {
      const user = await resolver.resolve(token);
      if (user) return user;
    }
    return null;
  }
}
