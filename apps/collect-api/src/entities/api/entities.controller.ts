import type { IncomingMessage, ServerResponse } from 'node:http';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../../auth/authenticated-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { RequireAuth } from '../../auth/require-auth.decorator.js';
import { CollectConfig } from '../../config/collect-config.js';
import { CreateEntitiesDto, DeleteEntitiesDto, EntityBody, EntityListingQueryDto, PatchEntityDto, PatchEntityQueryDto, type BulkCreatedBody } from './entity-api.dto.js';
import { pageHeaders } from '../../wire-formats/page-headers.js';
import { EntitiesService } from './entities.service.js';

/** The entities of a list (docs/entities.md "API"). */
@ApiTags('entities')
@RequireAuth()
@Controller('api/v2/entity-lists/:pk/entities')
export class EntitiesController {
  constructor(
    private readonly entities: EntitiesService,
    private readonly config: CollectConfig,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The list\'s entities by id, paged; search in label and values; deleted=true lists only the deleted ones.' })
  @ApiOkResponse({ type: [EntityBody] })
  async list(
    @CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() query: EntityListingQueryDto,
    @Req() req: IncomingMessage & { originalUrl: string }, @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<EntityBody[]> {
    const { body, total, page, pageSize } = await this.entities.list(user, pk, query);
    for (const [k, v] of Object.entries(pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, page, pageSize, total))) res.setHeader(k, v);
    return body;
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Creates one entity (answers it) or {"entities": [...]} up to 10,000 (answers {"created": n}); all or nothing.' })
  @ApiCreatedResponse({ type: EntityBody })
  create(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: CreateEntitiesDto): Promise<EntityBody | BulkCreatedBody> {
    return this.entities.create(user, pk, body);
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({ summary: 'Deletes the entities named by entity_ids (up to 10,000).' })
  @ApiNoContentResponse()
  bulkDelete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: DeleteEntitiesDto): Promise<void> {
    return this.entities.bulkDelete(user, pk, body.entity_ids);
  }

  @Get(':id')
  @ApiOkResponse({ type: EntityBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('id') id: string): Promise<EntityBody> {
    return this.entities.get(user, pk, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Merges label and data into the entity as a new version; base_version, force, resolve.' })
  @ApiOkResponse({ type: EntityBody })
  patch(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('id') id: string, @Body() body: PatchEntityDto, @Query() query: PatchEntityQueryDto): Promise<EntityBody> {
    return this.entities.patch(user, pk, id, body, query);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse()
  delete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('id') id: string): Promise<void> {
    return this.entities.delete(user, pk, id);
  }
}
