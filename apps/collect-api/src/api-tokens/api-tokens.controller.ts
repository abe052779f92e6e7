import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { AccountClass } from '../auth/scope-class.decorator.js';
import { ApiTokenBody, ApiTokensQueryDto, CreateApiTokenDto, CreatedApiTokenBody } from './api-tokens.dto.js';
import { ApiTokensService } from './api-tokens.service.js';

/**
 * Personal access tokens (docs/auth.md, "Personal access tokens"). Account routes: a personal
 * token is refused here whatever its scopes; creating one also refuses Bearer callers (the
 * credential rule, docs/security.md), so only the user's own session creates tokens.
 */
@ApiTags('api-tokens')
@RequireAuth()
@AccountClass()
@Controller('api/v1/api-tokens')
export class ApiTokensController {
  constructor(private readonly tokens: ApiTokensService) {}

  @Post()
  @RequireAuth({ issuesCredentials: true })
  @ApiOperation({ summary: 'Creates a personal access token; the answer carries `token`, once. Basic, Token (the api_token) or TempToken only (Bearer and personal tokens: 403).' })
  @ApiCreatedResponse({ type: CreatedApiTokenBody })
  create(@CurrentUser() caller: AuthenticatedUser, @Body() body: CreateApiTokenDto): Promise<CreatedApiTokenBody> {
    return this.tokens.create(caller, { name: body.name, scopes: body.scopes, forms: body.forms, expiresAt: body.expires_at });
  }

  @Get()
  @ApiOperation({ summary: "The caller's live tokens, without the token (`?user=`: a platform admin lists another user's)." })
  @ApiOkResponse({ type: ApiTokenBody, isArray: true })
  list(@CurrentUser() caller: AuthenticatedUser, @Query() query: ApiTokensQueryDto): Promise<ApiTokenBody[]> {
    return this.tokens.list(caller, query.user);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revokes a token (the caller’s own; any for a platform admin): refused by every process within a second.' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  async revoke(@CurrentUser() caller: AuthenticatedUser, @Param('id', new ParseIntPipe({ errorHttpStatusCode: 404 })) id: number): Promise<void> {
    await this.tokens.revoke(caller, id);
  }
}
