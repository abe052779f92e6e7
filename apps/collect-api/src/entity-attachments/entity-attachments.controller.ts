import { applyDecorators, Controller, Get, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { ReadSlots } from '../database/read-slots.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { FormsService } from '../forms/forms.service.js';
import { EntityAttachmentsService } from './entity-attachments.service.js';

const ListCsvDocs = (summary: string) =>
  applyDecorators(ApiOperation({ summary }), ApiProduces('text/csv'), ApiOkResponse({ schema: { type: 'string', description: 'CSV: `name` (the uuid), `label`, `__version`, then the list\'s properties; one row per live entity.' } }));

/**
 * The list attachments of follow-up forms as ODK clients download them through the manifest's
 * `downloadUrl` (docs/entities.md, "Follow-up forms and their list attachment"), global and per
 * owner like the other form media: readonly and above on the form, as its manifest. The CSV is
 * generated from the live entities on a read slot (docs/security.md, "Streamed reads and heavy
 * queries"); `If-None-Match` with the current hash answers 304 without reading any entity.
 */
@ApiTags('openrosa')
@RequireAuth()
@Controller()
export class EntityAttachmentsController {
  constructor(
    private readonly attachments: EntityAttachmentsService,
    private readonly forms: FormsService,
    private readonly formsRepo: FormsRepository,
    private readonly slots: ReadSlots,
  ) {}

  @Get('xformsMedia/:pk/entity-list/:file')
  @ListCsvDocs("An entity list the form loads as `<list>.csv`, generated from the list's entities (readonly and above on the form).")
  async media(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('file') file: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    await this.send(user, await this.forms.getDocument(user, pk), file, req, res);
  }

  @Get(':username/xformsMedia/:pk/entity-list/:file')
  @ListCsvDocs("The same for a form of that owner (readonly and above on the form).")
  async ownerMedia(
    @CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Param('pk') pk: string, @Param('file') file: string, @Req() req: IncomingMessage, @Res() res: ServerResponse,
  ): Promise<void> {
    const form = await this.forms.getDocument(user, pk);
    if (form.ownerId !== (await this.formsRepo.activeUserId(username))) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    await this.send(user, form, file, req, res);
  }

  private async send(user: AuthenticatedUser, form: FormEntity, file: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { hash, list } = await this.attachments.attachment(form, file);
    res.setHeader('X-OpenRosa-Version', '1.0');
    if (req.headers['if-none-match'] === `"${hash}"`) {
      res.statusCode = 304;
      res.setHeader('ETag', `"${hash}"`);
      res.end();
      return;
    }
    const lease = await this.slots.open(user.id, res);
    await this.attachments.streamCsv(list.id, lease, res, { downloadName: () => file });
  }
}
