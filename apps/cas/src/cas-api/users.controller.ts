import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CAS_API_USER_SEARCH_SCOPES, CasUser, CasUserPage } from '@collect/contracts';
import { BearerAuth } from '@collect/jwt-validation';
import { ClientCredentialsOnlyGuard } from './client-credentials-only.guard.js';
import { UserSearchQueryDto } from './users.dto.js';
import { UsersService } from './users.service.js';

type RequestLike = { protocol: string; path: string; get(name: string): string | undefined };

/**
 * User search of the user-administration API (spec §5.3 "User on-boarding"): a client-
 * credentials token for the `cas-api` resource with both search scopes; a user's token is 403.
 */
@ApiTags('cas-api')
@ApiBearerAuth()
@Controller('api/users')
// Listed above BearerAuth so it runs after BearerTokenGuard (decorators apply bottom-up and append).
@UseGuards(ClientCredentialsOnlyGuard)
@BearerAuth(...CAS_API_USER_SEARCH_SCOPES)
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @ApiOperation({ summary: 'Search users (search, username, email, page, page_size)' })
  @ApiOkResponse({ type: CasUserPage })
  list(@Query() query: UserSearchQueryDto, @Req() req: RequestLike): Promise<CasUserPage> {
    return this.users.search(query, `${req.protocol}://${req.get('host')}${req.path}`);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One user by id (the CAS subject)' })
  @ApiOkResponse({ type: CasUser })
  get(@Param('id') id: string): Promise<CasUser> {
    return this.users.get(id);
  }
}
