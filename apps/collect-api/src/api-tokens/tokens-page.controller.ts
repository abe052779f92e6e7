import { Body, Controller, Get, NotFoundException, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { readCookie } from '../auth/cookies.js';
import { sendHtml, sendRedirect } from '../auth/html-response.js';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';
import { PERSONAL_TOKEN_SCOPES, type PersonalTokenScope } from '../auth/authenticated-user.js';
import { SkipAuth } from '../auth/require-auth.decorator.js';
import { CasSignInService } from '../cas-client/cas-sign-in.service.js';
import { CollectConfig } from '../config/collect-config.js';
import { SecretBox, hashToken } from '../crypto/secrets.js';
import { TokensPageFormDto } from './api-tokens.dto.js';
import { ApiTokensService, type TokenOwner } from './api-tokens.service.js';
import { COPY_SCRIPT_HASH, tokensPage, type TokensPageModel } from './tokens-page.views.js';

/**
 * `/tokens`: personal access tokens of the user signed in through the CAS (docs/auth.md, "The
 * /tokens page"). The browser holds only the HttpOnly session cookie; every form carries a CSRF
 * token bound to that session (HMAC of its id under COLLECT_SECRET_KEY), and the cookie is
 * SameSite=Lax besides. A new token is in the answer to its POST only (no-store), never in a
 * cookie, storage or URL.
 */
@ApiExcludeController()
@SkipAuth()
@Controller('tokens')
export class TokensPageController {
  private readonly box: SecretBox;

  constructor(
    private readonly signIn: CasSignInService,
    private readonly tokens: ApiTokensService,
    private readonly config: CollectConfig,
  ) {
    this.box = new SecretBox(config.COLLECT_SECRET_KEY);
  }

  @Get()
  async page(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const user = await this.user(req);
    if (!user) return sendRedirect(res, '/auth/login?return_to=%2Ftokens');
    await this.render(res, 200, req, user, {});
  }

  @Post()
  async create(@Req() req: HttpRequest, @Body() body: TokensPageFormDto, @Res() res: HttpResponse): Promise<void> {
    const user = await this.checked(req, res, body);
    if (!user) return;
    const name = (body.name ?? '').trim();
    const scope = body.scope as PersonalTokenScope;
    if (!name || name.length > 100) return this.render(res, 400, req, user, { error: 'Give the token a name (at most 100 characters).', name });
    if (!PERSONAL_TOKEN_SCOPES.includes(scope)) return this.render(res, 400, req, user, { error: 'Choose a scope: read, submit or write.', name });
    const created = await this.tokens.create(user, { name, scopes: [scope] });
    await this.render(res, 200, req, user, { created: { name, token: created.token } });
  }

  @Post(':id/revoke')
  async revoke(@Req() req: HttpRequest, @Param('id') id: string, @Body() body: TokensPageFormDto, @Res() res: HttpResponse): Promise<void> {
    const user = await this.checked(req, res, body);
    if (!user) return;
    if (!/^\d{1,9}$/.test(id)) return this.render(res, 404, req, user, { error: 'No such token.' });
    try {
      await this.tokens.revoke(user, Number(id));
    } catch (err) {
      if (err instanceof NotFoundException) return this.render(res, 404, req, user, { error: 'No such token (already revoked?).' });
      throw err;
    }
    sendRedirect(res, '/tokens', 303);
  }

  /** The signed-in user of this browser (only their own tokens, whatever their platform role), or null. */
  private async user(req: HttpRequest): Promise<TokenOwner | null> {
    if (!this.signIn.enabled) throw new NotFoundException({ detail: 'Not found.' });
    const session = await this.signIn.sessionUser(req);
    return session ? { id: session.id, username: session.username, isSuperuser: false } : null;
  }

  /** The user of a POST whose CSRF token matches the session; otherwise answered here (null). */
  private async checked(req: HttpRequest, res: HttpResponse, body: TokensPageFormDto): Promise<TokenOwner | null> {
    const user = await this.user(req);
    if (!user) {
      sendRedirect(res, '/auth/login?return_to=%2Ftokens', 303);
      return null;
    }
    const session = this.sessionId(req);
    if (typeof body.csrf_token !== 'string' || !session || !this.box.verify(csrfValue(session), body.csrf_token)) {
      await this.render(res, 403, req, user, { error: 'The form expired or was not sent from this site (CSRF check failed). Try again.' });
      return null;
    }
    return user;
  }

  private sessionId(req: HttpRequest): string | undefined {
    return readCookie(req, this.config.CAS_SESSION_COOKIE_NAME);
  }

  /** The session's CSRF token: an HMAC of the session id's hash, so no further cookie is needed. */
  private csrf(req: HttpRequest): string | null {
    const id = this.sessionId(req);
    return id ? this.box.sign(csrfValue(id)) : null;
  }

  private async render(res: HttpResponse, status: number, req: HttpRequest, user: TokenOwner, extra: Partial<TokensPageModel>): Promise<void> {
    const model: TokensPageModel = { username: user.username, csrf: this.csrf(req) ?? '', tokens: await this.tokens.list(user), ...extra };
    sendHtml(res, status, tokensPage(model), model.created ? [COPY_SCRIPT_HASH] : []);
  }
}

/** What the session's CSRF token signs: the session id's hash, never the id itself. */
function csrfValue(sessionId: string): string {
  return `tokens-csrf:${hashToken(sessionId)}`;
}
