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
  /**
   * OAuth 2.0 scopes granted to a Bearer token, or the scopes of a personal access token;
   * undefined for the user's own credentials (Basic, the `api_token`, TempToken: full access).
   */
  scopes?: string[];
  /** Set when the caller presented a personal access token (docs/auth.md, "Personal access tokens"). */
  personalToken?: PersonalTokenGrant;
}

/** The scopes of a personal access token (docs/auth.md, "Personal access tokens"). */
export const PERSONAL_TOKEN_SCOPES = ['read', 'submit', 'write'] as const;
export type PersonalTokenScope = (typeof PERSONAL_TOKEN_SCOPES)[number];

/** What a personal access token allows beyond the user's roles: its scopes and, when narrowed, its forms. */
export interface PersonalTokenGrant {
  id: number;
  scopes: readonly PersonalTokenScope[];
  /** Ids of the forms the token is narrowed to; null when it is not narrowed. */
  forms: readonly number[] | null;
}

/**
 * False when the caller's personal access token is narrowed to forms and this is not one of
 * them. Every form check (FormAccessService, intake, formList) asks this beside the role, so a
 * narrowed token is refused (403) on a form its user may otherwise see.
 */
export function tokenAllowsForm(user: Pick<AuthenticatedUser, 'personalToken'> | undefined, formId: number): boolean {
  const forms = user?.personalToken?.forms;
  return !forms || forms.includes(formId);
}

/**
 * The credential rule (docs/security.md, "The credential rule"): no credential may be exchanged
 * for a broader one. A Bearer access token (local `/o/` or CAS) is scoped, so its holder never
 * sees or mints an unscoped credential (API token, temporary token, OAuth client secret) nor a
 * stored third-party secret; neither does a personal access token (it is scoped too). Basic,
 * `Token` with the `api_token` and `TempToken` are the user's full credentials.
 */
export function holdsScopedCredential(user: AuthenticatedUser | undefined): boolean {
  return user?.scopes !== undefined;
}
