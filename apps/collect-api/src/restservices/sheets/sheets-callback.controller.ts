import { Controller, Get, Optional, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SheetsCallbackBody, SheetsCallbackQueryDto } from './sheets.dto.js';
import { HttpErrorWithHeaders, UnauthorizedError } from '@collect/contracts';
import { WWW_AUTHENTICATE } from '../../auth/auth-header.js';
import type { AuthenticatedUser } from '../../auth/authenticated-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import type { HttpRequest } from '../../auth/http-types.js';
import { CasSignInService } from '../../cas-client/cas-sign-in.service.js';
import { SheetsService } from './sheets.service.js';

/**
 * The OAuth 2.0 consent redirect of the sheet provider. The `state` is bound to the user who
 * created the spreadsheet service: the callback completes only for that user, signed in by any
 * scheme (a browser arriving from the provider answers the Basic prompt, or carries its CAS
 * sign-in session), so a consent URL sent to someone else cannot tie their sheet account to the
 * sender's services, nor theirs to the sender's (login CSRF, docs/restservices.md). A client
 * that set its own `redirect_uri` forwards `code` and `state` here with its credentials.
 */
@ApiTags('restservices')
@Controller('api/v1/restservices/sheets')
export class SheetsCallbackController {
  constructor(
    private readonly sheets: SheetsService,
    @Optional() private readonly casSignIn?: CasSignInService,
  ) {}

  @Get('callback')
  @ApiOperation({ summary: 'Stores the sheet provider grant and links the waiting spreadsheet service; only for the user who created it.' })
  @ApiOkResponse({ type: SheetsCallbackBody })
  async callback(@CurrentUser() user: AuthenticatedUser | undefined, @Query() query: SheetsCallbackQueryDto, @Req() req: HttpRequest): Promise<SheetsCallbackBody> {
    const caller = user ?? (this.casSignIn?.enabled ? await this.casSignIn.sessionUser(req) : null);
    if (!caller) throw new UnauthorizedError('Sign in as the user who created the spreadsheet service to finish linking it.', WWW_AUTHENTICATE.basic);
    // It stores a grant: a read-only token may not (the AuthGuard asks only `read` of a GET).
    if (user?.scopes && !user.scopes.includes('write')) throw new HttpErrorWithHeaders(403, "The access token lacks the 'write' scope.", {});
    return this.sheets.callback(caller.id, query.code, query.state);
  }
}
