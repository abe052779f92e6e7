import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser, AuthScheme } from './authenticated-user.js';

/** What every personal access token begins with, so secret scanners recognise a leaked one. */
export const PERSONAL_TOKEN_PREFIX = 'cpat_';

/** True for a credential shaped like a personal access token (sent as `Token` or `Bearer`). */
export function isPersonalToken(credential: string | undefined): credential is string {
  return typeof credential === 'string' && credential.startsWith(PERSONAL_TOKEN_PREFIX);
}

/**
 * Checks a presented personal access token: the caller with `personalToken` and `scopes` set,
 * or null when the token is unknown, revoked or expired (a 401 like a wrong password).
 */
export interface PersonalTokenVerifier {
  verify(token: string, scheme: AuthScheme): Promise<AuthenticatedUser | null>;
}

/**
 * Where the AuthGuard finds the personal-token check. The api-tokens module (a higher layer:
 * it also needs forms and the CAS session) registers it in `onModuleInit`, as token sources do
 * with BearerResolvers; without it every `cpat_` credential is refused.
 */
@Injectable()
export class PersonalTokens {
  private verifier: PersonalTokenVerifier | null = null;

  register(verifier: PersonalTokenVerifier): void {
    this.verifier = verifier;
  }

  /** The caller (with `scheme` as sent: `token` or `bearer`), or null: refused with a 401. */
  verify(token: string, scheme: AuthScheme): Promise<AuthenticatedUser | null> {
    return this.verifier ? this.verifier.verify(token, scheme) : Promise.resolve(null);
  }
}
