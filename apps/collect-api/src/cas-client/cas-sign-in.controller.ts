import { Controller, Get, Logger, NotFoundException, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';
import { sendHtml, sendRedirect } from '../auth/html-response.js';
import { SkipAuth } from '../auth/require-auth.decorator.js';
import { SignInCallbackQueryDto, SignInQueryDto } from './cas-sign-in.dto.js';
import { CasSignInService, safeReturnTo } from './cas-sign-in.service.js';
import { logoutConfirmPage, plainLoginPage, refusalPage } from './views.js';

/**
 * Browser pages of the CAS sign-in (docs/cas-integration.md): /login, /auth/login (to the CAS),
 * /auth/callback (back from it), /auth/logout. HTML and redirects only; the JSON API never
 * reads the session cookie (CORS credentials stay off).
 */
@ApiExcludeController()
@SkipAuth()
@Controller()
export class CasSignInController {
  private readonly logger = new Logger('CasSignInController');

  constructor(private readonly signIn: CasSignInService) {}

  @Get()
  home(@Res() res: HttpResponse): void {
    // Where the CAS sends the browser after logout (its registered post_logout_redirect_uri).
    sendRedirect(res, '/login');
  }

  @Get('login')
  async login(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const user = this.signIn.enabled ? await this.signIn.sessionUser(req) : null;
    sendHtml(res, 200, plainLoginPage({ user, casEnabled: this.signIn.enabled }));
  }

  @Get('auth/login')
  async start(@Query() query: SignInQueryDto, @Res() res: HttpResponse): Promise<void> {
    this.requireEnabled();
    let location: string;
    try {
      location = await this.signIn.start(safeReturnTo(query.return_to), res);
    } catch (err) {
      this.logger.warn({ event: 'cas_sign_in.discovery_failed', error: err instanceof Error ? err.message : String(err) });
      res.setHeader('Retry-After', '5');
      return sendHtml(res, 503, refusalPage('The central authentication service cannot be reached. Try again shortly.'));
    }
    sendRedirect(res, location);
  }

  @Get('auth/callback')
  async callback(@Query() query: SignInCallbackQueryDto, @Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    this.requireEnabled();
    const outcome = await this.signIn.callback(query, req, res);
    if (outcome.kind === 'refused') return sendHtml(res, outcome.status, refusalPage(outcome.message));
    sendRedirect(res, outcome.location, 303);
  }

  @Get('auth/logout')
  logoutPage(@Res() res: HttpResponse): void {
    sendHtml(res, 200, logoutConfirmPage());
  }

  /** POST only: the SameSite=Lax cookie is not sent on a cross-site POST, so no forced logouts. */
  @Post('auth/logout')
  async logout(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    sendRedirect(res, await this.signIn.logout(req, res), 303);
  }

  private requireEnabled(): void {
    if (!this.signIn.enabled) throw new NotFoundException({ detail: 'Not found.' });
  }
}
