import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { pageHeaders, pageRequest } from '../submissions/pagination.js';
import { DeliveryLogEntry, RestServiceBody, RetryAck, RetryFailedAck, TestFireBody } from './restservice-bodies.dto.js';
import { DeliveryLogQueryDto, RestServiceDto, RestServiceListQueryDto, RestServicePatchDto } from './restservice.dto.js';
import { RestServicesService } from './restservices.service.js';
import { ReplayBody, ReplayCount, ReplayDto } from './replay/replay.dto.js';

/** Rest services (spec §2.1, §4.1) and their delivery log (docs/api-conventions.md §Forwarding). */
@ApiTags('restservices')
@ApiExtraModels(ReplayCount)
@RequireAuth()
@Controller('api/v1/restservices')
export class RestServicesController {
  constructor(
    private readonly services: RestServicesService,
    private readonly config: CollectConfig,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Rest services of every form the caller can see; `?xform=` narrows to one form.' })
  @ApiOkResponse({ type: RestServiceBody, isArray: true })
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: RestServiceListQueryDto): Promise<RestServiceBody[]> {
    return this.services.list(user, query.xform);
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Registers a rest service on a form (editor or above).' })
  @ApiCreatedResponse({ type: RestServiceBody })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: RestServiceDto): Promise<RestServiceBody> {
    return this.services.create(user, body);
  }

  @Get(':pk')
  @ApiOkResponse({ type: RestServiceBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<RestServiceBody> {
    return this.services.get(user, pk);
  }

  @Patch(':pk')
  @ApiOperation({ summary: 'Changes some fields (editor or above); `"active": true` re-activates a disabled service.' })
  @ApiOkResponse({ type: RestServiceBody })
  patch(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: RestServicePatchDto): Promise<RestServiceBody> {
    return this.services.update(user, pk, body, true);
  }

  @Put(':pk')
  @ApiOperation({ summary: 'Replaces the service (editor or above).' })
  @ApiOkResponse({ type: RestServiceBody })
  put(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: RestServiceDto): Promise<RestServiceBody> {
    return this.services.update(user, pk, body, false);
  }

  @Delete(':pk')
  @HttpCode(204)
  @ApiOperation({ summary: 'Deletes the service and its delivery log (manager or above).' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async remove(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<void> {
    await this.services.remove(user, pk);
  }

  @Get(':pk/deliveries')
  @ApiOperation({ summary: 'Delivery log, one entry per attempt, newest first (`status`, `page`, `page_size`).' })
  @ApiOkResponse({ type: DeliveryLogEntry, isArray: true })
  async deliveries(
    @CurrentUser() user: AuthenticatedUser,
    @Param('pk') pk: string,
    @Query() query: DeliveryLogQueryDto,
    @Req() req: { originalUrl: string },
    @Res({ passthrough: true }) res: { setHeader(name: string, value: string): void },
  ): Promise<DeliveryLogEntry[]> {
    const page = pageRequest(query);
    const { items, total } = await this.services.deliveries(user, pk, query.status, page);
    for (const [k, v] of Object.entries(pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, page.page, page.pageSize, total))) res.setHeader(k, v);
    return items;
  }

  @Post(':pk/deliveries/:id/retry')
  @HttpCode(202)
  @ApiOperation({ summary: 'Sends a finished delivery again (by log entry id or X-Delivery-Id), with a fresh attempt budget.' })
  @ApiAcceptedResponse({ type: RetryAck })
  retry(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('id') id: string): Promise<RetryAck> {
    return this.services.retryDelivery(user, pk, id);
  }

  @Post(':pk/retry-failed')
  @HttpCode(202)
  @ApiOperation({ summary: 'Sends every failed delivery of the service again.' })
  @ApiAcceptedResponse({ type: RetryFailedAck })
  retryFailed(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<RetryFailedAck> {
    return this.services.retryFailed(user, pk);
  }

  @Post(':pk/test')
  @HttpCode(200)
  @ApiOperation({ summary: 'Test-fire: sends the newest submission (a made-up one for an empty form) once, as a delivery would, and answers the request sent (secrets masked) and the answer. Not a delivery: not logged, not retried (editor or above). 429 past TEST_FIRE_PER_USER_PER_MINUTE per user.' })
  @ApiOkResponse({ type: TestFireBody })
  test(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<TestFireBody> {
    return this.services.testFire(user, pk);
  }

  @Post(':pk/replay')
  @HttpCode(202)
  @ApiOperation({ summary: 'Replay / back-fill: sends existing submissions as `created` and, to a service taking `entity_created`, the live entities of the form\'s lists (filters: submitted_after, submitted_before, submission_ids, only_failed) to this service again, paced by its limit (editor or above). `dry_run`: 200 with the count. 409 while the service has an open replay; 429 past REPLAY_MAX_OPEN_PER_USER open replays of the user.' })
  @ApiAcceptedResponse({ type: ReplayBody, headers: { Location: { description: 'GET .../replays/{id}', schema: { type: 'string' } } } })
  @ApiOkResponse({ description: 'dry_run', schema: { $ref: getSchemaPath(ReplayCount) } })
  async replay(
    @CurrentUser() user: AuthenticatedUser,
    @Param('pk') pk: string,
    @Body() body: ReplayDto,
    @Res({ passthrough: true }) res: { status(code: number): void; setHeader(name: string, value: string): void },
  ): Promise<ReplayBody | ReplayCount> {
    const result = await this.services.replay(user, pk, body);
    if (!('id' in result)) {
      res.status(200);
      return result;
    }
    res.setHeader('Location', `${this.config.PUBLIC_BASE_URL}/api/v1/restservices/${pk}/replays/${result.id}`);
    return result;
  }

  @Get(':pk/replays/:id')
  @ApiOperation({ summary: 'A replay and its progress (done and failed out of total).' })
  @ApiOkResponse({ type: ReplayBody })
  replayProgress(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('id') id: string): Promise<ReplayBody> {
    return this.services.replayProgress(user, pk, id);
  }

  @Delete(':pk/replays/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Cancels a replay: what is not sent yet is dropped (editor or above).' })
  @ApiNoContentResponse({ description: 'Cancelled (or already over).' })
  async cancelReplay(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('id') id: string): Promise<void> {
    await this.services.cancelReplay(user, pk, id);
  }
}
