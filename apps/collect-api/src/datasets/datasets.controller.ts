import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import type { ServerResponse } from 'node:http';
import { CollectConfig } from '../config/collect-config.js';
import { ReadSlots } from '../database/read-slots.js';
import { heavyRead } from '../submissions/submission-data.service.js';
import { PageQueryDto, pageHeaders, pageRequest } from '../submissions/pagination.js';
import { SUBMISSION_JSON_SCHEMA } from '../submissions/submission.dto.js';
import { sendJsonArray, type JsonResponse } from '../submissions/json-stream.js';
import { CreateDataviewDto, CreateMergedDatasetDto, DataviewBody, DataviewListQueryDto, MergedDatasetBody, UpdateDataviewDto } from './dataset.dto.js';
import { DatasetsService } from './datasets.service.js';

type HeaderRes = { setHeader(name: string, value: string): void };

@ApiTags('merged-datasets')
@RequireAuth()
@Controller('api/v1/merged-datasets')
export class MergedDatasetsController {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly slots: ReadSlots,
    private readonly config: CollectConfig,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Creates a merged dataset `{name, xforms: [ids], project?}` over forms the caller can see.' })
  @ApiCreatedResponse({ type: MergedDatasetBody })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateMergedDatasetDto) {
    return this.datasets.createMerged(user, body);
  }

  @Get()
  @ApiOkResponse({ type: MergedDatasetBody, isArray: true })
  list(@CurrentUser() user: AuthenticatedUser) {
    return this.datasets.listMerged(user);
  }

  @Get(':pk')
  @ApiOkResponse({ type: MergedDatasetBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string) {
    return this.datasets.getMerged(user, pk);
  }

  @Get(':pk/data')
  @ApiOperation({ summary: 'Submissions of the forms of the merged dataset (paged).' })
  @ApiOkResponse({ schema: { type: 'array', items: SUBMISSION_JSON_SCHEMA } })
  async data(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() query: PageQueryDto, @Req() req: { originalUrl: string; ip?: string }, @Res() res: JsonResponse): Promise<void> {
    const page = pageRequest(query);
    const lease = heavyRead({ limit: page.pageSize }) ? await this.slots.open(user?.id ?? req.ip ?? '', res as ServerResponse) : undefined;
    const { total, batches } = await this.datasets.mergedData(user, pk, page, lease);
    await sendJsonArray(res, pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, page.page, page.pageSize, total), batches);
  }

  @Delete(':pk')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<void> {
    await this.datasets.deleteMerged(user, pk);
  }
}

@ApiTags('dataviews')
@RequireAuth()
@Controller('api/v1/dataviews')
export class DataviewsController {
  constructor(private readonly datasets: DatasetsService, private readonly config: CollectConfig) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Creates a dataview `{name, xform, columns, query}` (editor on the form).' })
  @ApiCreatedResponse({ type: DataviewBody })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateDataviewDto) {
    return this.datasets.createView(user, body);
  }

  @Get()
  @ApiOkResponse({ type: DataviewBody, isArray: true })
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: DataviewListQueryDto) {
    return this.datasets.listViews(user, query.xform);
  }

  @Get(':pk')
  @ApiOkResponse({ type: DataviewBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string) {
    return this.datasets.getView(user, pk);
  }

  @Get(':pk/data')
  @ApiOperation({ summary: 'Submissions matching the dataview, projected to its columns (paged).' })
  @ApiOkResponse({ schema: { type: 'array', items: SUBMISSION_JSON_SCHEMA } })
  async data(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() query: PageQueryDto, @Req() req: { originalUrl: string }, @Res({ passthrough: true }) res: HeaderRes) {
    const page = pageRequest(query);
    const { items, total } = await this.datasets.viewData(user, pk, page);
    for (const [k, v] of Object.entries(pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, page.page, page.pageSize, total))) res.setHeader(k, v);
    return items;
  }

  @Patch(':pk')
  @ApiOkResponse({ type: DataviewBody })
  update(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: UpdateDataviewDto) {
    return this.datasets.updateView(user, pk, body);
  }

  @Delete(':pk')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<void> {
    await this.datasets.deleteView(user, pk);
  }
}
