/**
 * The caller as every feature module sees it. The auth module (Basic, Token, TempToken,
 * Bearer) resolves the Authorization header to this and puts it on `request.user`; feature
 * modules read it with `@CurrentUser()` and never look at headers themselves.
 */
export type AuthScheme = 'basic' | 'token' | 'temptoken' | 'bearer';

export interface AuthenticatedUser {
  id: number;
  username: string;
  isSuperuser: boolean;
  scheme: AuthScheme;
  /** OAuth 2.0 scopes granted to a Bearer token; undefined for the other schemes (full access). */
  scopes?: string[];
}

/**
 * The credential rule (docs/security.md, "The credential rule"): no credential may be exchanged
 * for a broader one. A Bearer access token (local `/o/` or CAS) is scoped, so its holder never
 * sees or mints an unscoped credential (API token, temporary token, OAuth client secret) nor a
 * stored third-party secret. Basic, `Token` and `TempToken` are the user's full credentials.
 */
export function holdsScopedCredential(user: AuthenticatedUser | undefined): boolean {
  return user?.scopes !== undefined;
}
