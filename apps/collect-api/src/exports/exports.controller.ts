import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { ReadSlots } from '../database/read-slots.js';
import { setInertHeaders } from '../storage/served-content.js';
import { ExportQueryDto, exportOptions } from './export.dto.js';
import { ExportsService, type ExportFormat, type ExportTarget } from './exports.service.js';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat | 'zip', string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  zip: 'application/zip',
};

const FILE = { schema: { type: 'string', format: 'binary' } };

/**
 * `GET /api/v1/data/{pk}.csv|.xlsx` and the same on merged datasets and dataviews
 * (docs/exports.md): streamed while PostgreSQL's cursor yields rows. These routes must be
 * registered before `GET /api/v1/data/:formPk` (ExportsModule precedes SubmissionsModule in
 * feature-modules.ts), or that route would take `12.csv` as a form id.
 */
@ApiTags('exports')
@RequireAuth()
@Controller('api/v1')
export class ExportsController {
  constructor(
    private readonly exports: ExportsService,
    private readonly slots: ReadSlots,
  ) {}

  @Get('data/:formPk.csv')
  @ApiOperation({ summary: 'The submissions of a form as CSV (readonly or above): repeats as `rep[i]/q` columns.' })
  @ApiProduces(EXPORT_CONTENT_TYPES.csv)
  @ApiOkResponse(FILE)
  formCsv(@CurrentUser() user: AuthenticatedUser, @Param('formPk') pk: string, @Query() q: ExportQueryDto, @Res() res: ServerResponse) {
    return this.send(user, { kind: 'form', pk }, 'csv', q, res);
  }

  @Get('data/:formPk.xlsx')
  @ApiOperation({ summary: 'The submissions of a form as XLSX (readonly or above): one sheet per repeat with `_parent_index`.' })
  @ApiProduces(EXPORT_CONTENT_TYPES.xlsx)
  @ApiOkResponse(FILE)
  formXlsx(@CurrentUser() user: AuthenticatedUser, @Param('formPk') pk: string, @Query() q: ExportQueryDto, @Res() res: ServerResponse) {
    return this.send(user, { kind: 'form', pk }, 'xlsx', q, res);
  }

  @Get('merged-datasets/:pk/data.csv')
  @ApiProduces(EXPORT_CONTENT_TYPES.csv)
  @ApiOkResponse(FILE)
  mergedCsv(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() q: ExportQueryDto, @Res() res: ServerResponse) {
    return this.send(user, { kind: 'merged', pk }, 'csv', q, res);
  }

  @Get('merged-datasets/:pk/data.xlsx')
  @ApiProduces(EXPORT_CONTENT_TYPES.xlsx)
  @ApiOkResponse(FILE)
  mergedXlsx(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() q: ExportQueryDto, @Res() res: ServerResponse) {
    return this.send(user, { kind: 'merged', pk }, 'xlsx', q, res);
  }

  @Get('dataviews/:pk/data.csv')
  @ApiProduces(EXPORT_CONTENT_TYPES.csv)
  @ApiOkResponse(FILE)
  dataviewCsv(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() q: ExportQueryDto, @Res() res: ServerResponse) {
    return this.send(user, { kind: 'dataview', pk }, 'csv', q, res);
  }

  @Get('dataviews/:pk/data.xlsx')
  @ApiProduces(EXPORT_CONTENT_TYPES.xlsx)
  @ApiOkResponse(FILE)
  dataviewXlsx(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() q: ExportQueryDto, @Res() res: ServerResponse) {
    return this.send(user, { kind: 'dataview', pk }, 'xlsx', q, res);
  }

  /**
   * Takes a read slot (docs/security.md, "Streamed reads and heavy queries"), checks access and
   * plans before the first byte (errors are still JSON), then streams.
   */
  private async send(user: AuthenticatedUser, target: ExportTarget, format: ExportFormat, q: ExportQueryDto, res: ServerResponse): Promise<void> {
    const lease = await this.slots.open(user.id, res);
    const source = await this.exports.source(user, target);
    const options = exportOptions(q);
    const plan = await this.exports.plan(source, options, lease);
    res.statusCode = 200;
    res.setHeader('Content-Type', EXPORT_CONTENT_TYPES[format]);
    setInertHeaders(res, `${source.name}.${format}`);
    try {
      await this.exports.writePlan(plan, format, options, res);
      if (!res.writableEnded) res.end();
    } catch (err) {
      res.destroy(err as Error);
    }
  }
}
