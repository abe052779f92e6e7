import { Controller, Delete, Get, HttpCode, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { HttpResponse as Response } from '../auth/http-types.js';
import { HttpErrorWithHeaders, NOT_FOUND_DETAIL } from '@collect/contracts';
import { holdsScopedCredential, type AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { AccountClass } from '../auth/scope-class.decorator.js';
import { CurrentProfile, CurrentProfileService } from '../users/current-profile.service.js';
import { PublicUserBody, type ProfileBody } from '../users/profile.presenter.js';
import { UserTokensService } from '../users/user-tokens.service.js';
import { UsersService } from '../users/users.service.js';

/** The caller's own account: profile with tokens, temporary-token expiry, API-token rotation. */
@ApiTags('user')
@Controller('api/v1')
export class UserController {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: UserTokensService,
    private readonly profiles: CurrentProfileService,
  ) {}

  @Get('user')
  @RequireAuth()
  @ApiOperation({ summary: "The caller's profile, with api_token and temp_token (not for Bearer or personal-token callers: a scoped token never buys an unscoped one)." })
  @ApiOkResponse({ type: CurrentProfile })
  me(@CurrentUser() caller: AuthenticatedUser): Promise<CurrentProfile | ProfileBody> {
    return holdsScopedCredential(caller) ? this.profiles.withoutTokens(caller.id) : this.profiles.get(caller.id);
  }

  @Delete('user/expire')
  @HttpCode(204)
  @RequireAuth({ schemes: ['basic'] })
  @AccountClass()
  @ApiOperation({ summary: "Deletes the caller's temporary token (Basic credentials only)." })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async expire(@CurrentUser() caller: AuthenticatedUser): Promise<void> {
    if (!(await this.tokens.expireTempToken(caller.id))) throw new HttpErrorWithHeaders(400, 'Temporary token not found!', {});
  }

  @Get('user/regenerate_auth_token')
  @RequireAuth({ issuesCredentials: true })
  @AccountClass()
  @ApiOperation({ summary: 'Rotates the API token; 201 with the new key as a JSON string. Basic, Token or TempToken only (Bearer: 403).' })
  @ApiCreatedResponse({ schema: { type: 'string', description: 'The new API token (40 hex).' } })
  async regenerate(@CurrentUser() caller: AuthenticatedUser, @Res() res: Response): Promise<void> {
    res.status(201).json(await this.tokens.regenerateApiToken(caller.id));
  }

  @Get('users/:username')
  @RequireAuth()
  @ApiOperation({ summary: 'A user by username (public fields).' })
  @ApiOkResponse({ type: PublicUserBody })
  async user(@Param('username') username: string): Promise<PublicUserBody> {
    const user = await this.users.findByUsername(username);
    if (!user || !user.isActive) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return { id: user.id, username: user.username, first_name: user.firstName, last_name: user.lastName };
  }
}
