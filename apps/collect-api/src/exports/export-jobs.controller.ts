import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { pipeline } from 'node:stream/promises';
import type { ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { setInertHeaders } from '../storage/served-content.js';
import { CreateExportDto, ExportJobDto, exportOptions, exportSubject } from './export.dto.js';
import { ExportJobsService } from './export-jobs.service.js';
import { EXPORT_CONTENT_TYPES } from './exports.controller.js';

/** Asynchronous exports (docs/exports.md): request, state, download. */
@ApiTags('exports')
@RequireAuth()
@Controller('api/v1/export')
export class ExportJobsController {
  constructor(private readonly jobs: ExportJobsService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({ summary: 'Starts an export of a form (`xform`: `csv`, `xlsx`, or `zip` for its media; readonly or above on the form) or of an entity list (`entity_list`: `csv`, `xlsx`; whoever may read the list).' })
  @ApiAcceptedResponse({ type: ExportJobDto })
  async create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateExportDto): Promise<Pick<ExportJobDto, 'id' | 'status' | 'progress'> & ExportJobDto> {
    return this.jobs.create(user, exportSubject(body), body.format, exportOptions(body));
  }

  @Get(':id')
  @ApiOperation({ summary: 'The state of an export (the requester only): status, progress, download_url when done, expires_at.' })
  @ApiOkResponse({ type: ExportJobDto })
  status(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<ExportJobDto> {
    return this.jobs.status(user, id);
  }

  @Get(':id/download')
  @ApiOperation({ summary: 'The finished file (the requester only, until it expires).' })
  @ApiProduces(EXPORT_CONTENT_TYPES.csv, EXPORT_CONTENT_TYPES.xlsx, EXPORT_CONTENT_TYPES.zip)
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' } })
  async download(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string, @Res() res: ServerResponse): Promise<void> {
    const file = await this.jobs.download(user, id);
    res.statusCode = 200;
    res.setHeader('Content-Type', EXPORT_CONTENT_TYPES[file.format]);
    setInertHeaders(res, file.name);
    await pipeline(file.stream, res).catch(() => res.destroy());
  }
}
