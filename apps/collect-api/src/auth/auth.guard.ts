import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { requestAddress, type HttpRequest as Request } from './http-types.js';
import { AuthThrottleService } from './auth-throttle.service.js';
import { HttpErrorWithHeaders, TooManyRequestsError, UnauthorizedError } from '@collect/contracts';
import { CollectConfig } from '../config/collect-config.js';
import { BASIC_NOT_BASE64, basicUserid, bearerToken, parseAuthorization, WWW_AUTHENTICATE, type RefusedUnchecked } from './auth-header.js';
import { holdsScopedCredential, type AuthenticatedUser, type AuthScheme } from './authenticated-user.js';
import { AUTH_REQUIREMENT, SKIP_AUTH, type AuthRequirement } from './require-auth.decorator.js';
import { BasicStrategy } from './strategies/basic.strategy.js';
import { BearerStrategy } from './strategies/bearer.strategy.js';
import { TempTokenStrategy } from './strategies/temp-token.strategy.js';
import { TokenStrategy } from './strategies/token.strategy.js';
import { isPersonalToken, PersonalTokens } from './personal-tokens.js';
import { SCOPE_CLASS, type ScopeClass } from './scope-class.decorator.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const NOT_PROVIDED = 'Authentication credentials were not provided.';
const SCOPED_CREDENTIAL = 'An access token cannot reveal or create credentials; use Basic, Token or TempToken authentication.';
const ACCOUNT_ROUTE = 'A personal access token cannot manage credentials or the account; use Basic, Token or TempToken authentication.';

type AuthRequest = Request & { user?: AuthenticatedUser; authCredentials?: string };

/**
 * Global guard: resolves the Authorization header to `request.user` through the strategy of its
 * scheme (only the schemes in AUTH_SCHEMES), then applies `@RequireAuth()`. Bad credentials are a
 * 401 on every endpoint (as DRF does); no credentials are a 401 only where `@RequireAuth()` asks
 * for a user. A Bearer token needs scope `read` for safe methods and `write` for the others (403
 * otherwise). A personal access token (`Token cpat_...` or `Bearer cpat_...`) is checked here too,
 * against the route's scope class (scope-class.decorator.ts; docs/auth.md, "Scopes of a route");
 * its form narrowing is checked with the role, wherever a form is (FormAccessService).
 *
 * Every scheme is checked by its strategy's `validate` directly, not through
 * `passport.authenticate`: with passport on the path, every request's objects (request, response,
 * headers, the body of an OpenRosa submission) outlived V8's young-generation collections and
 * waited for a major one, on one connection too: 660 to 780 KB survived each scavenge of the Token
 * GET against 3 to 5 KB without it (docs/architecture.md, "The request pipeline").
 * What passport-http and
 * passport-http-bearer check before their verify callback is ported in auth-header.ts
 * (basicUserid, bearerToken), so the same requests are refused with the same answers.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly enabled: Set<AuthScheme>;

  constructor(
    private readonly reflector: Reflector,
    config: CollectConfig,
    private readonly basic: BasicStrategy,
    private readonly token: TokenStrategy,
    private readonly tempToken: TempTokenStrategy,
    private readonly bearer: BearerStrategy,
    private readonly throttle: AuthThrottleService,
    private readonly personal: PersonalTokens,
  ) {
    this.enabled = new Set(config.AUTH_SCHEMES);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(SKIP_AUTH, targets)) return true;
    const req = context.switchToHttp().getRequest<AuthRequest>();
    const user = (req.user = await this.authenticate(req));
    const requirement = this.reflector.getAllAndOverride<AuthRequirement | undefined>(AUTH_REQUIREMENT, targets);
    const scopeClass = this.reflector.getAllAndOverride<ScopeClass | undefined>(SCOPE_CLASS, targets);
    if (!requirement) {
      this.checkScopes(req.method, user, [], scopeClass);
      return true;
    }
    const schemes = (requirement.schemes ?? [...this.enabled]).filter((s) => this.enabled.has(s));
    if (!user || !schemes.includes(user.scheme)) {
      throw new UnauthorizedError(NOT_PROVIDED, WWW_AUTHENTICATE[schemes[0] ?? 'basic']);
    }
    if (requirement.superuser && !user.isSuperuser) {
      throw new HttpErrorWithHeaders(403, 'You do not have permission to perform this action.', {});
    }
    if (requirement.issuesCredentials && holdsScopedCredential(user)) throw new HttpErrorWithHeaders(403, SCOPED_CREDENTIAL, {});
    this.checkScopes(req.method, user, requirement.bearerScopes ?? [], scopeClass);
    return true;
  }

  /**
   * A Bearer token needs `read` for safe methods, `write` for the others, plus any extra. A
   * personal access token needs one of the scopes its route's class accepts (personalScopes).
   */
  private checkScopes(method: string, user: AuthenticatedUser | undefined, extra: string[], scopeClass: ScopeClass | undefined): void {
    if (!user?.scopes) return;
    if (user.personalToken) {
      if (scopeClass === 'account') throw new HttpErrorWithHeaders(403, ACCOUNT_ROUTE, {});
      const accepted = personalScopes(method, scopeClass, extra);
      if (!user.personalToken.scopes.some((s) => accepted.includes(s))) {
        throw new HttpErrorWithHeaders(403, `The personal access token lacks a scope this request needs (one of: ${accepted.join(', ')}).`, {});
      }
      return;
    }
    const needed = [SAFE_METHODS.has(method) ? 'read' : 'write', ...extra];
    const missing = needed.find((s) => !user.scopes!.includes(s));
    if (missing) throw new HttpErrorWithHeaders(403, `The access token lacks the '${missing}' scope.`, {});
  }

  private async authenticate(req: AuthRequest): Promise<AuthenticatedUser | undefined> {
    const parsed = parseAuthorization(req.headers.authorization);
    // A scheme the server does not enable is ignored, like an authentication class not installed.
    if (parsed.kind === 'none' || !this.enabled.has(parsed.scheme)) return undefined;
    // RATE_LIMIT_AUTH_FAILURES_PER_IP: an address that failed too often is refused every scheme.
    const ip = requestAddress(req);
    const blocked = this.throttle.blockedFor(ip);
    if (blocked) throw new TooManyRequestsError('Too many failed authentication attempts from your address. Try again later.', blocked);
    if (parsed.kind === 'malformed') {
      await this.throttle.failedOther(ip);
      throw new UnauthorizedError(parsed.detail, WWW_AUTHENTICATE[parsed.scheme]);
    }
    req.authCredentials = parsed.credentials;
    // Refused by the strategy before its check ran (a malformed credential): never counted elsewhere.
    let refusedUnchecked = false;
    try {
      const found = await this.verify(parsed.scheme, req);
      if (typeof found === 'object') return found;
      refusedUnchecked = true;
      throw new UnauthorizedError(refusal(parsed.scheme, found), WWW_AUTHENTICATE[parsed.scheme]);
    } catch (err) {
      // Basic counts its own password attempts before the check (PasswordLoginService).
      if (err instanceof UnauthorizedError && (parsed.scheme !== 'basic' || refusedUnchecked)) await this.throttle.failedOther(ip);
      throw err;
    } finally {
      // Not `delete`: removing a property turns the request object into a slow dictionary
      // object for everything that reads it afterwards.
      req.authCredentials = undefined;
    }
  }

  /**
   * The caller, or the status the scheme's package refused with before its check. A `validate`
   * that answers no caller without throwing counts as a 401 (passport's `fail()`).
   */
  private async verify(scheme: AuthScheme, req: AuthRequest): Promise<AuthenticatedUser | RefusedUnchecked> {
    let found: AuthenticatedUser | false | null;
    if (scheme === 'token' && isPersonalToken(req.authCredentials)) found = await this.personal.verify(req.authCredentials, 'token');
    else if (scheme === 'token') found = await this.token.validate(req);
    else if (scheme === 'temptoken') found = await this.tempToken.validate(req);
    else if (scheme === 'basic') {
      const userid = basicUserid(req.headers.authorization!);
      if (typeof userid === 'number') return userid;
      found = await this.basic.validate(req, userid);
    } else {
      const token = bearerToken(req);
      if (typeof token === 'number') return token;
      // A personal access token is never offered to the OAuth or CAS token sources.
      found = isPersonalToken(token) ? await this.personal.verify(token, 'bearer') : await this.bearer.validate(token);
    }
    return found || 401;
  }
}

/**
 * The personal-token scopes a route of this class and method accepts (scope-class.decorator.ts):
 * `write` always; `read` on safe methods; `submit` on submit-class routes. A safe method that
 * changes state (`bearerScopes: ['write']`) needs `write`.
 */
function personalScopes(method: string, scopeClass: ScopeClass | undefined, extra: string[]): string[] {
  if (extra.includes('write')) return ['write'];
  const safe = SAFE_METHODS.has(method);
  return ['write', ...(safe ? ['read'] : []), ...(scopeClass === 'submit' ? ['submit'] : [])];
}

/**
 * Why a strategy refused before checking the credential (its `validate` names the other reasons
 * itself). passport-http and passport-http-bearer refuse a malformed header with 400: Basic
 * without a colon, Bearer beside an `access_token` in the body or query (RFC 6750 §2).
 */
function refusal(scheme: AuthScheme, status: RefusedUnchecked): string {
  if (scheme === 'basic') return status === 400 ? BASIC_NOT_BASE64 : 'Invalid username/password.';
  if (scheme === 'bearer' && status === 400) return 'Invalid token header. Send the access token in the Authorization header only.';
  return 'Invalid token.';
}
