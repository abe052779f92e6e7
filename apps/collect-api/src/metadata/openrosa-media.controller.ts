import { applyDecorators, Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { SubmitClass } from '../auth/scope-class.decorator.js';
import type { FormEntity } from '../forms/form.entity.js';
import { sendStoredFile } from '../media/media-download.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { setInertHeaders } from '../storage/served-content.js';
import { OpenRosaManifestService } from './openrosa-manifest.service.js';

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
    private readonly manifests: OpenRosaManifestService,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  @Get('xformsManifest/:pk')
  @ManifestDocs("The form's media files (readonly and above).")
  async manifest(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Res() res: ServerResponse): Promise<void> {
    const form = await this.manifests.form(user, pk);
    sendManifest(res, await this.manifests.manifestXml(form, (id) => `/xformsMedia/${pk}/${id}`));
  }

  @Get(':username/xformsManifest/:pk')
  @ManifestDocs("The media files of a form of that owner (readonly and above); download URLs are owner-scoped.")
  async ownerManifest(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Param('pk') pk: string, @Res() res: ServerResponse): Promise<void> {
    const form = await this.manifests.ownerForm(user, username, pk);
    sendManifest(res, await this.manifests.manifestXml(form, (id) => `/${encodeURIComponent(username)}/xformsMedia/${form.id}/${id}`));
  }

  @Get('xformsMedia/:pk/:mediaId')
  @MediaDocs('One media file of the form (readonly and above).')
  async media(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Param('mediaId') mediaId: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    await this.sendMedia(req, res, await this.manifests.form(user, pk), mediaId);
  }

  @Get(':username/xformsMedia/:pk/:mediaId')
  @MediaDocs('One media file of a form of that owner (readonly and above).')
  async ownerMedia(
    @CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Param('pk') pk: string, @Param('mediaId') mediaId: string, @Req() req: IncomingMessage, @Res() res: ServerResponse,
  ): Promise<void> {
    await this.sendMedia(req, res, await this.manifests.ownerForm(user, username, pk), mediaId);
  }

  private async sendMedia(req: IncomingMessage, res: ServerResponse, form: FormEntity, mediaId: string): Promise<void> {
    const file = await this.manifests.mediaFile(form, mediaId);
    res.setHeader('X-OpenRosa-Version', '1.0');
    await sendStoredFile(req, res, this.storage, file);
  }
}

function sendManifest(res: ServerResponse, xml: string): void {
  res.setHeader('X-OpenRosa-Version', '1.0');
  setInertHeaders(res, 'manifest.xml');
  res.setHeader('Content-Type', 'text/xml; charset=utf-8');
  res.statusCode = 200;
  res.end(xml);
}
