import { Controller, Delete, Get, HttpCode, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { PageQueryDto, pageHeaders, pageRequest } from './pagination.js';
import type { SubmissionJson } from './submission-json.js';
import { SUBMISSION_JSON_SCHEMA } from './submission.dto.js';
import { SubmissionsService } from './submissions.service.js';

/** Submissions of a form as §2.2 JSON: paged list, one, soft delete. */
@ApiTags('data')
@RequireAuth()
@Controller('api/v1/data')
export class DataController {
  constructor(
    private readonly submissions: SubmissionsService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  @Get(':formPk')
  @ApiOperation({ summary: 'Submissions of a form (page, page_size; Link and X-Total-Count headers).' })
  @ApiOkResponse({ schema: { type: 'array', items: SUBMISSION_JSON_SCHEMA } })
  async list(
    @CurrentUser() user: AuthenticatedUser,
    @Param('formPk') formPk: string,
    @Query() query: PageQueryDto,
    @Req() req: { originalUrl: string },
    @Res({ passthrough: true }) res: { setHeader(name: string, value: string): void },
  ): Promise<SubmissionJson[]> {
    const page = pageRequest(query);
    const { items, total } = await this.submissions.list(user, formPk, page);
    for (const [k, v] of Object.entries(pageHeaders(`${this.config.PUBLIC_BASE_URL}${req.originalUrl}`, page.page, page.pageSize, total))) res.setHeader(k, v);
    return items;
  }

  @Get(':formPk/:id')
  @ApiOkResponse({ schema: SUBMISSION_JSON_SCHEMA })
  get(@CurrentUser() user: AuthenticatedUser, @Param('formPk') formPk: string, @Param('id') id: string): Promise<SubmissionJson> {
    return this.submissions.get(user, formPk, id);
  }

  @Delete(':formPk/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Soft delete (editor or above): `_deleted_at` set, hidden from lists and media.' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(@CurrentUser() user: AuthenticatedUser, @Param('formPk') formPk: string, @Param('id') id: string): Promise<void> {
    await this.submissions.delete(user, formPk, id);
  }
}
