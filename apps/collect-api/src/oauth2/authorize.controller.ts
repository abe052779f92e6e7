import { Body, Controller, Get, Optional, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';
import { sendHtml, sendRedirect } from '../auth/html-response.js';
import { requestAddress } from '../auth/http-types.js';
import { PasswordLoginService } from '../auth/password-login.service.js';
import { SkipAuth } from '../auth/require-auth.decorator.js';
import { CasSignInService } from '../cas-client/cas-sign-in.service.js';
import { CollectConfig } from '../config/collect-config.js';
import { UsersService } from '../users/users.service.js';
import { LoginSessions } from './login-session.js';
import { AuthorizeDecisionDto, AuthorizeQueryDto, LoginFormDto, type AuthorizeParams } from './oauth2.dto.js';
import { OAuth2Service, type AuthorizeRequest } from './oauth2.service.js';
import { consentPage, errorPage, loginPage } from './views.js';

/**
 * GET /o/authorize shows the login page (no session) or the consent page; POST /o/login signs
 * in; POST /o/authorize records the decision and redirects to the client. Pages are HTML with
 * CSRF tokens; the Authorization header plays no part here.
 */
@ApiExcludeController()
@SkipAuth()
@Controller('o')
export class AuthorizeController {
  private readonly sessions: LoginSessions;

  constructor(
    private readonly oauth: OAuth2Service,
    private readonly users: UsersService,
    private readonly logins: PasswordLoginService,
    config: CollectConfig,
    // A CAS-signed-in browser session counts as signed in here too (docs/cas-integration.md).
    @Optional() private readonly casSignIn?: CasSignInService,
  ) {
    this.sessions = new LoginSessions(config.COLLECT_SECRET_KEY, config.PUBLIC_BASE_URL, config.OAUTH2_LOGIN_SESSION_SECONDS);
  }

  @Get('authorize')
  async authorize(@Query() query: AuthorizeQueryDto, @Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const check = await this.oauth.checkAuthorizeRequest(query);
    if (check.kind === 'page') return sendHtml(res, 400, errorPage(check.message));
    if (check.kind === 'redirect') return sendRedirect(res, check.location);
    const user = await this.sessionUser(req);
    const csrf = this.sessions.csrfToken(req, res);
    if (!user) return sendHtml(res, 200, loginPage({ appName: check.request.app.name, next: req.url, csrf, casSignIn: this.casSignIn?.enabled }));
    sendHtml(res, 200, consentPage({ appName: check.request.app.name, username: user.username, scopes: check.request.scopes, params: carried(check.request, query), csrf }));
  }

  @Post('login')
  async login(@Body() body: LoginFormDto, @Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const next = body.next?.startsWith('/o/authorize?') ? body.next : undefined;
    if (!this.sessions.checkCsrf(req, body.csrf_token)) return sendHtml(res, 403, errorPage('The form expired or was not sent from this site (CSRF check failed). Go back and try again.'));
    if (!next) return sendHtml(res, 400, errorPage('Missing or invalid next parameter.'));
    const check = await this.oauth.checkAuthorizeRequest(Object.fromEntries(new URL(next, 'http://x').searchParams));
    if (check.kind !== 'ok') return sendHtml(res, 400, errorPage('The authorization request is not valid any more.'));
    const username = (body.username ?? '').slice(0, 150);
    const password = body.password ?? '';
    const csrf = this.sessions.csrfToken(req, res);
    const again = (status: number, error: string) => sendHtml(res, status, loginPage({ appName: check.request.app.name, next, csrf, error, username, casSignIn: this.casSignIn?.enabled }));
    if (!username || !password) return again(400, 'Enter your username and password.');
    const result = await this.logins.login(username, password, 'login', requestAddress(req));
    if (result.kind === 'locked') {
      res.setHeader('Retry-After', String(result.retryAfter));
      return again(429, 'Too many failed login attempts. Try again later.');
    }
    // Inactive users get the same answer as a wrong password.
    if (result.kind !== 'ok') return again(200, 'Please enter a correct username and password.');
    const user = result.user;
    this.sessions.start(res, user.id);
    sendRedirect(res, next, 303);
  }

  @Post('authorize')
  async decide(@Body() body: AuthorizeDecisionDto, @Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    if (!this.sessions.checkCsrf(req, body.csrf_token)) return sendHtml(res, 403, errorPage('The form expired or was not sent from this site (CSRF check failed). Go back and try again.'));
    const check = await this.oauth.checkAuthorizeRequest(body);
    if (check.kind === 'page') return sendHtml(res, 400, errorPage(check.message));
    if (check.kind === 'redirect') return sendRedirect(res, check.location);
    const user = await this.sessionUser(req);
    if (!user) {
      const next = `/o/authorize?${new URLSearchParams(carried(check.request, body) as Record<string, string>).toString()}`;
      return sendHtml(res, 200, loginPage({ appName: check.request.app.name, next, csrf: this.sessions.csrfToken(req, res), casSignIn: this.casSignIn?.enabled }));
    }
    const location = body.decision === 'allow' ? await this.oauth.approve(check.request, user.id) : this.oauth.deny(check.request);
    sendRedirect(res, location);
  }

  private async sessionUser(req: HttpRequest): Promise<{ id: number; username: string } | null> {
    const session = this.sessions.session(req);
    if (session === null) return (this.casSignIn?.enabled && (await this.casSignIn.sessionUser(req))) || null;
    const user = await this.users.findById(session.userId);
    // A session begun before the account's credentials were revoked (docs/security.md) no longer counts.
    // Cookies carry whole seconds: a session of the same second as the reset counts as before it.
    if (user?.credentialsResetAt && session.issuedAt <= user.credentialsResetAt.getTime()) return null;
    return user?.isActive ? user : null;
  }
}

/** The authorize parameters the consent form sends back (redirect_uri only when it was given). */
function carried(request: AuthorizeRequest, params: AuthorizeParams): Record<string, string | undefined> {
  return {
    client_id: request.app.clientId,
    response_type: 'code',
    state: request.state,
    redirect_uri: request.redirectUriGiven ? request.redirectUri : undefined,
    scope: request.scopes.join(' '),
    code_challenge: request.codeChallenge ?? undefined,
    code_challenge_method: request.codeChallenge ? String(params.code_challenge_method ?? 'S256') : undefined,
  };
}
