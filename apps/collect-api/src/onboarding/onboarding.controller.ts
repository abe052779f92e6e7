import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { HttpResponse } from '../auth/http-types.js';
import { RequireSuperuser } from '../auth/require-auth.decorator.js';
import { CasUserSearchQueryDto, CasUsersPage, CreateServiceAccountDto, OnboardCasUserDto, OnboardedUserBody, ServiceAccountBody } from './onboarding.dto.js';
import { OnboardingService } from './onboarding.service.js';

/** CAS users on-boarded to collect-api (platform admins only: others 403, anonymous 401). */
@ApiTags('cas-users')
@RequireSuperuser()
@Controller('api/v1/cas-users')
export class CasUsersController {
  constructor(private readonly onboarding: OnboardingService) {}

  @Get()
  @ApiOperation({ summary: 'Searches the users of the central authentication service (cas-api), each marked with its on-boarding state.' })
  @ApiOkResponse({ type: CasUsersPage })
  search(@Query() query: CasUserSearchQueryDto): Promise<CasUsersPage> {
    return this.onboarding.search(query);
  }

  @Post()
  @ApiOperation({ summary: 'On-boards a CAS user as a local user linked by subject (201; 200 when already on-boarded).' })
  @ApiCreatedResponse({ type: OnboardedUserBody })
  @ApiOkResponse({ type: OnboardedUserBody, description: 'Already on-boarded (re-activated if it was off-boarded).' })
  async onboard(@Body() body: OnboardCasUserDto, @Res({ passthrough: true }) res: HttpResponse): Promise<OnboardedUserBody> {
    const { user, created } = await this.onboarding.onboard(body);
    res.status(created ? 201 : 200);
    return user;
  }

  @Delete(':casUserId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Off-boards a CAS user: the local user is deactivated and its sign-in sessions end.' })
  @ApiNoContentResponse({ description: 'Off-boarded.' })
  async offboard(@Param('casUserId') casUserId: string): Promise<void> {
    await this.onboarding.offboard(casUserId);
  }
}

/** CAS clients (client credentials) acting as local service accounts (platform admins only). */
@ApiTags('service-accounts')
@RequireSuperuser()
@Controller('api/v1/service-accounts')
export class ServiceAccountsController {
  constructor(private readonly onboarding: OnboardingService) {}

  @Get()
  @ApiOperation({ summary: 'Lists the service accounts.' })
  @ApiOkResponse({ type: ServiceAccountBody, isArray: true })
  list(): Promise<ServiceAccountBody[]> {
    return this.onboarding.listServiceAccounts();
  }

  @Post()
  @ApiOperation({ summary: 'Links a CAS client to a local service account that forms can be shared with (201; 200 when already linked).' })
  @ApiCreatedResponse({ type: ServiceAccountBody })
  @ApiOkResponse({ type: ServiceAccountBody, description: 'Already linked (re-activated if it was deactivated).' })
  async create(@Body() body: CreateServiceAccountDto, @Res({ passthrough: true }) res: HttpResponse): Promise<ServiceAccountBody> {
    const { account, created } = await this.onboarding.addServiceAccount(body);
    res.status(created ? 201 : 200);
    return account;
  }

  @Delete(':clientId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Deactivates the service account of a CAS client; its tokens are refused from then on.' })
  @ApiNoContentResponse({ description: 'Deactivated.' })
  async remove(@Param('clientId') clientId: string): Promise<void> {
    await this.onboarding.removeServiceAccount(clientId);
  }
}
