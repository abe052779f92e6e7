import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { ReadSlots } from '../database/read-slots.js';
import { EntityListAccess } from '../entities/lists/entity-list-access.js';
import { EntityAttachmentsService } from '../entity-attachments/entity-attachments.service.js';
import { listHash } from '../entity-attachments/entity-list-csv.js';
import { setInertHeaders } from '../storage/served-content.js';
import { EntityListExportQueryDto } from './export.dto.js';
import { EXPORT_CONTENT_TYPES } from './exports.controller.js';
import { writeEntityListXlsx } from './entity-list-export.js';
import { formulaGuard } from './spreadsheet-cells.js';

const FILE = { schema: { type: 'string', format: 'binary' } };

/**
 * An entity list as CSV and XLSX (docs/entities.md, "Exports of a list"): whoever may read the
 * list (its owner, a manager or any role on a form that uses it); the live entities with
 * `name`, `label`, `__version` and the properties, streamed on a read slot like every export
 * (docs/security.md, "Streamed reads and heavy queries"). The CSV is the follow-up forms' file
 * with the downloads' formula guard (`escape_formulas`). These routes are registered before
 * `GET /api/v2/entity-lists/:pk` (ExportsModule precedes the entities' module).
 */
@ApiTags('entities')
@RequireAuth()
@Controller('api/v2/entity-lists')
export class EntityListExportsController {
  constructor(
    private readonly access: EntityListAccess,
    private readonly lists: EntityAttachmentsService,
    private readonly slots: ReadSlots,
  ) {}

  @Get(':pk.csv')
  @ApiOperation({ summary: 'The live entities of the list as CSV: `name` (uuid), `label`, `__version`, then the properties.' })
  @ApiProduces(EXPORT_CONTENT_TYPES.csv)
  @ApiOkResponse(FILE)
  csv(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() q: EntityListExportQueryDto, @Res() res: ServerResponse) {
    return this.sendCsv(user, pk, q, res);
  }

  @Get(':pk/download')
  @ApiOperation({ summary: 'The same CSV as `{pk}.csv`.' })
  @ApiProduces(EXPORT_CONTENT_TYPES.csv)
  @ApiOkResponse(FILE)
  download(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Query() q: EntityListExportQueryDto, @Res() res: ServerResponse) {
    return this.sendCsv(user, pk, q, res);
  }

  @Get(':pk.xlsx')
  @ApiOperation({ summary: 'The live entities of the list as XLSX: one sheet `entities` with the CSV\'s columns.' })
  @ApiProduces(EXPORT_CONTENT_TYPES.xlsx)
  @ApiOkResponse(FILE)
  async xlsx(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Res() res: ServerResponse): Promise<void> {
    const list = await this.access.readable(user, pk);
    const lease = await this.slots.open(user.id, res);
    const open = await this.lists.openRows(list.id, lease);
    res.statusCode = 200;
    res.setHeader('Content-Type', EXPORT_CONTENT_TYPES.xlsx);
    res.setHeader('ETag', `"${listHash(open.head)}"`);
    setInertHeaders(res, `${open.head.name}.xlsx`);
    try {
      await writeEntityListXlsx(open.head.properties, open.batches, res);
      if (!res.writableEnded) res.end();
    } catch (err) {
      res.destroy(err as Error);
    } finally {
      await open.close();
    }
  }

  private async sendCsv(user: AuthenticatedUser, pk: string, q: EntityListExportQueryDto, res: ServerResponse): Promise<void> {
    const list = await this.access.readable(user, pk);
    const lease = await this.slots.open(user.id, res);
    await this.lists.streamCsv(list.id, lease, res, { downloadName: (head) => `${head.name}.csv`, cells: formulaGuard(q.escape_formulas ?? true) });
  }
}
