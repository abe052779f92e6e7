import { Body, Controller, Delete, Get, HttpCode, NotFoundException, Param, ParseIntPipe, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { AccountClass } from '../auth/scope-class.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { OAuthApplicationsService } from './oauth-applications.service.js';
import { ApplicationBody, applicationInput, CreateOAuthApplicationDto } from './oauth2.dto.js';
import type { OAuthApplicationEntity } from './oauth2.entities.js';

/** Client applications of the local OAuth 2.0 provider, managed by their owner (or an admin). */
@ApiTags('oauth2')
@RequireAuth()
@AccountClass()
@Controller('api/v1/oauth-applications')
export class OAuthApplicationsController {
  constructor(
    private readonly applications: OAuthApplicationsService,
    private readonly config: CollectConfig,
  ) {}

  @Post()
  // A new client (and its secret) is a credential: not for Bearer callers (docs/security.md, "The credential rule").
  @RequireAuth({ issuesCredentials: true })
  @ApiOperation({ summary: 'Registers an application; the answer carries client_secret, once. Basic, Token or TempToken only (Bearer: 403).' })
  @ApiCreatedResponse({ type: ApplicationBody })
  async create(@CurrentUser() caller: AuthenticatedUser, @Body() body: CreateOAuthApplicationDto): Promise<ApplicationBody> {
    const { app, clientSecret } = await this.applications.create(caller.id, applicationInput(body));
    return { ...this.present(app), ...(clientSecret ? { client_secret: clientSecret } : {}) };
  }

  @Get()
  @ApiOperation({ summary: "The caller's applications (every one for a platform admin)." })
  @ApiOkResponse({ type: ApplicationBody, isArray: true })
  async list(@CurrentUser() caller: AuthenticatedUser): Promise<ApplicationBody[]> {
    return (await this.applications.list(caller.id, caller.isSuperuser)).map((a) => this.present(a));
  }

  @Get(':id')
  @ApiOkResponse({ type: ApplicationBody })
  async get(@CurrentUser() caller: AuthenticatedUser, @Param('id', new ParseIntPipe({ errorHttpStatusCode: 404 })) id: number): Promise<ApplicationBody> {
    return this.present(await this.managed(caller, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Deletes an application with its codes and tokens.' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(@CurrentUser() caller: AuthenticatedUser, @Param('id', new ParseIntPipe({ errorHttpStatusCode: 404 })) id: number): Promise<void> {
    await this.applications.delete(await this.managed(caller, id));
  }

  private async managed(caller: AuthenticatedUser, id: number): Promise<OAuthApplicationEntity> {
    const app = await this.applications.findManaged(id, caller.id, caller.isSuperuser);
    if (!app) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return app;
  }

  private present(app: OAuthApplicationEntity): ApplicationBody {
    return {
      id: app.id,
      url: `${this.config.PUBLIC_BASE_URL}/api/v1/oauth-applications/${app.id}`,
      client_id: app.clientId,
      name: app.name,
      client_type: app.clientType,
      authorization_grant_type: app.authorizationGrantType,
      redirect_uris: app.redirectUris,
      owner: app.userId,
      created: new Date(app.createdAt).toISOString(),
    };
  }
}
