import { applyDecorators, Controller, Get, Inject, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { SubmitClass } from '../auth/scope-class.decorator.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { FormsService } from '../forms/forms.service.js';
import { EntityAttachmentsService } from '../entity-attachments/entity-attachments.service.js';
import { sendStoredFile } from '../media/media-download.js';
import { escapeXml } from '../openrosa/xml.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { setInertHeaders } from '../storage/served-content.js';
import { MetadataService } from './metadata.service.js';

const ManifestDocs = (summary: string) =>
  applyDecorators(ApiOperation({ summary }), ApiProduces('text/xml'), ApiOkResponse({ schema: { type: 'string', description: 'An OpenRosa `<manifest>`: each file with `filename`, `hash` (`md5:<hex>`) and `downloadUrl`.' } }));
const MediaDocs = (summary: string) =>
  applyDecorators(ApiOperation({ summary }), ApiProduces('application/octet-stream'), ApiOkResponse({ schema: { type: 'string', format: 'binary', description: 'The file, as an inert attachment.' } }));

/**
 * The OpenRosa form manifest (`/xformsManifest/{pk}`) and media downloads
 * (`/xformsMedia/{pk}/{media id}`), global and per owner as the Django implementation has them
 * (docs/forms.md, "Form media and the OpenRosa manifest"). Readonly and above, like the form.
 */
@ApiTags('openrosa')
@RequireAuth()
@SubmitClass()
@Controller()
export class OpenRosaMediaController {
  constructor(
    private readonly metadata: MetadataService,
    private readonly entityLists: EntityAttachmentsService,
    private readonly forms: FormsService,
    private readonly formsRepo: FormsRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  @Get('xformsManifest/:pk')
  @ManifestDocs("The form's media files (readonly and above).")
  async manifest(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Res() res: ServerResponse): Promise<void> {
    await this.sendManifest(res, await this.forms.getDocument(user, pk), (id) => `/xformsMedia/${pk}/${id}`);
  }

  @Get(':username/xformsManifest/:pk')
  @ManifestDocs("The media files of a form of that owner (readonly and above); download URLs are owner-scoped.")
  async ownerManifest(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Param('pk') pk: string, @Res() res: ServerResponse): Promise<void> {
    const form = await this.ownerForm(user, username, pk);
    await this.sendManifest(res, form, (id) => `/${encodeURIComponent(username)}/xformsMedia/${form.id}/${id}`);
  }

  @Get('xformsMedia/:pk/:mediaId')
  @MediaDocs('One media file of the form (readonly and above).')
  async media(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('mediaId') mediaId: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    await this.sendMedia(req, res, await this.forms.getDocument(user, pk), mediaId);
  }

  @Get(':username/xformsMedia/:pk/:mediaId')
  @MediaDocs('One media file of a form of that owner (readonly and above).')
  async ownerMedia(
    @CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Param('pk') pk: string, @Param('mediaId') mediaId: string, @Req() req: IncomingMessage, @Res() res: ServerResponse,
  ): Promise<void> {
    await this.sendMedia(req, res, await this.ownerForm(user, username, pk), mediaId);
  }

  /** The form, when it is visible to the caller and belongs to `username` (another owner's form under the name: 404). */
  private async ownerForm(user: AuthenticatedUser, username: string, pk: string): Promise<FormEntity> {
    const form = await this.forms.getDocument(user, pk);
    if (form.ownerId !== (await this.formsRepo.activeUserId(username))) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return form;
  }

  /**
   * The form's media files, then the entity lists it loads (`type="entityList"`, generated from
   * the list: docs/entities.md, "Follow-up forms and their list attachment"); a list takes the
   * place of an uploaded file of the same name. Their URLs sit beside the media ones
   * (`<media path>/entity-list/<file>`).
   */
  private async sendManifest(res: ServerResponse, form: FormEntity, downloadPath: (mediaId: number | string) => string): Promise<void> {
    const [media, lists] = await Promise.all([this.metadata.ofForm(form), this.entityLists.ofForm(form)]);
    const listed = new Set(lists.map((l) => l.filename));
    const url = (path: string) => escapeXml(`${this.config.PUBLIC_BASE_URL}${path}`);
    const files = media.filter((row) => !listed.has(row.dataValue)).map((row) =>
      `<mediaFile><filename>${escapeXml(row.dataValue)}</filename><hash>${row.fileHash}</hash><downloadUrl>${url(downloadPath(row.id))}</downloadUrl></mediaFile>`,
    );
    for (const l of lists) {
      files.push(`<mediaFile type="entityList"><filename>${escapeXml(l.filename)}</filename><hash>${l.hash}</hash><downloadUrl>${url(downloadPath(`entity-list/${encodeURIComponent(l.filename)}`))}</downloadUrl></mediaFile>`);
    }
    res.setHeader('X-OpenRosa-Version', '1.0');
    setInertHeaders(res, 'manifest.xml');
    res.setHeader('Content-Type', 'text/xml; charset=utf-8');
    res.statusCode = 200;
    res.end(`<?xml version="1.0" encoding="UTF-8"?><manifest xmlns="http://openrosa.org/xforms/xformsManifest">${files.join('')}</manifest>`);
  }

  private async sendMedia(req: IncomingMessage, res: ServerResponse, form: FormEntity, mediaId: string): Promise<void> {
    const row = await this.metadata.fileOf(form, mediaId);
    res.setHeader('X-OpenRosa-Version', '1.0');
    await sendStoredFile(req, res, this.storage, { path: row.dataFile, mimetype: row.dataFileType, downloadName: row.dataValue });
  }
}
