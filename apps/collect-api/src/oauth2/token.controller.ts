import { Body, Controller, Headers, Post, Res } from '@nestjs/common';
import { ApiConsumes, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { HttpResponse } from '../auth/http-types.js';
import { SkipAuth } from '../auth/require-auth.decorator.js';
import { OAuthApplicationsService } from './oauth-applications.service.js';
import { OAuthError } from './oauth2.errors.js';
import { OAuth2Service } from './oauth2.service.js';
import { OAuthErrorBody, TokenRequestDto, TokenResponse } from './oauth2.dto.js';

/**
 * POST /o/token (form-encoded): authorization_code and refresh_token grants. Errors are the
 * RFC 6749 §5.2 shape `{"error", "error_description"}`, not the API's `{"detail"}`.
 * `@SkipAuth()`: the Basic header here carries client credentials, not a user's.
 */
@ApiTags('oauth2')
@SkipAuth()
@Controller('o')
export class TokenController {
  constructor(
    private readonly oauth: OAuth2Service,
    private readonly applications: OAuthApplicationsService,
  ) {}

  @Post('token')
  @ApiOperation({ summary: 'Exchanges an authorization code or a refresh token for tokens. Client authentication by HTTP Basic or client_id/client_secret fields.' })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiOkResponse({ type: TokenResponse })
  @ApiResponse({ status: '4XX', type: OAuthErrorBody, description: 'RFC 6749 §5.2; 401 invalid_client with `WWW-Authenticate: Basic realm="oauth2"`; 429 slow_down with Retry-After.' })
  async token(@Body() body: TokenRequestDto, @Headers('authorization') authorization: string | undefined, @Res() res: HttpResponse): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    try {
      const client = await this.applications.authenticateClient(authorization, body);
      res.status(200).json(await this.oauth.token(client, body));
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      if (err.status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="oauth2"');
      res.status(err.status).json({ error: err.error, error_description: err.description });
    }
  }
}
