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
