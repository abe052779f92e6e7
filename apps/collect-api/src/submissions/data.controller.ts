import { Controller, Delete, Get, HttpCode, Param, Query, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { ReadSlots } from '../database/read-slots.js';
import { DataQueryDto, dataWindow, pageHeaders } from './pagination.js';
import { sendJsonArray, sendJsonBody, sendJsonText, sendNotModified, type JsonResponse } from './json-stream.js';
import { SUBMISSION_JSON_SCHEMA } from './submission.dto.js';
import { heavyRead, SubmissionDataService } from './submission-data.service.js';
import { SubmissionsService } from './submissions.service.js';

/** Submissions of a form as §2.2 JSON: paged and queried list, one, soft delete. */
@ApiTags('data')
@RequireAuth()
@Controller('api/v1/data')
export class DataController {
  constructor(
    private readonly submissions: SubmissionsService,
    private readonly data: SubmissionDataService,
    private readonly slots: ReadSlots,
    private readonly config: CollectConfig,
  ) {}

  @Get(':formPk')
  @ApiOperation({
    summary: 'Submissions of a form: page/page_size or start/limit; query, sort, fields (docs/data-api.md). Link (page mode) and X-Total-Count headers.',
  })
  @ApiOkResponse({ schema: { type: 'array', items: SUBMISSION_JSON_SCHEMA } })
  async list(
    @CurrentUser() user: AuthenticatedUser,
    @Param('formPk') formPk: string,
    @Query() query: DataQueryDto,
    @Req() req: { originalUrl: string; fresh: boolean; ip?: string },
    @Res() res: JsonResponse,
  ): Promise<void> {
    const window = dataWindow(query);
    const read = { ...window, query: query.query, sort: query.sort, fields: query.fields };
    const lease = heavyRead(read) ? await this.slots.open(user?.id ?? req.ip ?? '', res as ServerResponse) : undefined;
    const page = await this.data.formPage(user, formPk, { ...read, lease });
    const total = page.total;
    const headers = window.page === null ? { 'X-Total-Count': String(total) } : pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, window.page, window.limit, total);
    if (page.body) {
      // A kept page (docs/data-api.md, "Conditional reads"): `req.fresh` (express, package fresh)
      // compares If-None-Match with this ETag; the page was checked current for this caller.
      res.setHeader('ETag', page.etag);
      if (req.fresh) sendNotModified(res, headers);
      else sendJsonBody(res, headers, page.body);
    } else await sendJsonArray(res, headers, page.batches);
  }

  @Get(':formPk/:id')
  @ApiOkResponse({ schema: SUBMISSION_JSON_SCHEMA })
  async get(@CurrentUser() user: AuthenticatedUser, @Param('formPk') formPk: string, @Param('id') id: string, @Res() res: JsonResponse): Promise<void> {
    sendJsonText(res, await this.data.one(user, formPk, id));
  }

  @Delete(':formPk/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Soft delete (editor or above): `_deleted_at` set, hidden from lists and media.' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(@CurrentUser() user: AuthenticatedUser, @Param('formPk') formPk: string, @Param('id') id: string): Promise<void> {
    await this.submissions.delete(user, formPk, id);
  }
}
