import type { IncomingMessage, ServerResponse } from 'node:http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../../auth/authenticated-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { RequireAuth } from '../../auth/require-auth.decorator.js';
import { CollectConfig } from '../../config/collect-config.js';
import { CreateEntityListDto, EntityListBody, EntityListDetailBody, EntityPageQueryDto } from './entity-api.dto.js';
import { pageHeaders } from '../../wire-formats/page-headers.js';
import { EntityListsService } from './entity-lists.service.js';

/** Entity lists (docs/entities.md "API"). */
@ApiTags('entities')
@RequireAuth()
@Controller('api/v2/entity-lists')
export class EntityListsController {
  constructor(
    private readonly lists: EntityListsService,
    private readonly config: CollectConfig,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Creates an entity list owned by the caller (no properties yet).' })
  @ApiCreatedResponse({ type: EntityListDetailBody })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateEntityListDto): Promise<EntityListDetailBody> {
    return this.lists.create(user, body.name);
  }

  @Get()
  @ApiOperation({ summary: 'The lists the caller owns or has a role on a form of; paged (without page at most 1,000).' })
  @ApiOkResponse({ type: [EntityListBody] })
  async list(
    @CurrentUser() user: AuthenticatedUser, @Query() query: EntityPageQueryDto, @Req() req: IncomingMessage & { originalUrl: string }, @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<EntityListBody[]> {
    const { body, total, page, pageSize } = await this.lists.list(user, query);
    for (const [k, v] of Object.entries(pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, page, pageSize, total))) res.setHeader(k, v);
    return body;
  }

  @Get(':pk')
  @ApiOperation({ summary: 'One list with its properties, registration forms and follow-up forms.' })
  @ApiOkResponse({ type: EntityListDetailBody })
  detail(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<EntityListDetailBody> {
    return this.lists.detail(user, pk);
  }

  @Delete(':pk')
  @HttpCode(204)
  @ApiOperation({ summary: 'Deletes the list and its entities (owner or manager).' })
  @ApiNoContentResponse()
  delete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<void> {
    return this.lists.delete(user, pk);
  }
}
