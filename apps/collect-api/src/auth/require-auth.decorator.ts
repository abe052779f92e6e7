import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import type { AuthScheme } from './authenticated-user.js';

export const AUTH_REQUIREMENT = 'collect:auth-requirement';
export const SKIP_AUTH = 'collect:skip-auth';

export interface AuthRequirement {
  /** Only these schemes count (e.g. `DELETE /api/v1/user/expire` is Basic only). Default: any enabled. */
  schemes?: AuthScheme[];
  /** Platform admins only (users with is_superuser); others get 403. */
  superuser?: boolean;
  /**
   * Scopes a Bearer token needs here beyond the usual (`read` for safe methods, `write` for
   * others), e.g. `['write']` on a GET that changes state. Other schemes have full access.
   */
  bearerScopes?: string[];
  /**
   * The endpoint reveals or creates a credential (API or temporary token, OAuth client secret):
   * a scoped caller (Bearer) gets 403 whatever its scopes (docs/security.md, "The credential rule").
   */
  issuesCredentials?: boolean;
}

/**
 * Marks a controller or handler as needing an authenticated caller. Without credentials the
 * global AuthGuard answers 401 with `WWW-Authenticate`; with them, `@CurrentUser()` is set.
 * Endpoints without this decorator still see `@CurrentUser()` when credentials are sent.
 */
export const RequireAuth = (requirement: AuthRequirement = {}) =>
  applyDecorators(SetMetadata(AUTH_REQUIREMENT, requirement), ...documentedSchemes(requirement).map((scheme) => ApiSecurity(scheme)));

/** The schemes the OpenAPI document lists for the endpoint (names of COLLECT_SECURITY_SCHEMES). */
function documentedSchemes(requirement: AuthRequirement): AuthScheme[] {
  const schemes: AuthScheme[] = requirement.schemes ?? ['basic', 'token', 'temptoken', 'bearer'];
  return requirement.issuesCredentials ? schemes.filter((s) => s !== 'bearer') : schemes;
}

/** Platform admins only: 401 without credentials, 403 for a non-admin. */
export const RequireSuperuser = () => RequireAuth({ superuser: true });

/**
 * The AuthGuard does not read the Authorization header here, because the endpoint uses it for
 * something else: `POST /o/token` authenticates OAuth clients with Basic client_id:secret.
 */
export const SkipAuth = () => SetMetadata(SKIP_AUTH, true);
