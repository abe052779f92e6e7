import { BadRequestException, Controller, Get, Inject, NotFoundException, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath, ApiExtraModels } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { requestAddress } from '../auth/http-types.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { pageHeaders, pageRequest } from '../submissions/pagination.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { contentDisposition, servedContentType } from '../storage/served-content.js';
import { sendStoredFile, type DownloadOptions } from './media-download.js';
import { acceptsExactly, FileQueryDto, invalidIdMessage, MediaFilterQueryDto, mediaFilters, MediaListQueryDto } from './media-query.js';
import { parseMediaPathSegment, requestBaseUrl } from '../wire-formats/media-urls.js';
import { MediaCount, MediaJson } from './media.dto.js';
import { MediaService } from './media.service.js';

type Request = IncomingMessage & { originalUrl: string };
type Response = ServerResponse & { json(body: unknown): void };

/**
 * `/api/v1/media` (listing, count, record, downloads and variants) and `/api/v1/files/{pk}`.
 * Route order matters: `count` and `media.json` are declared before `media/:pk`, and the
 * `:pk` segment (`12`, `12.jpg`, `12-small.jpg`) is parsed here, not by the router.
 */
@ApiTags('media')
@RequireAuth()
@Controller('api/v1')
export class MediaController {
  constructor(
    private readonly media: MediaService,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    private readonly config: CollectConfig,
  ) {}

  @Get(['media', 'media.json'])
  @ApiOperation({
    summary: 'Attachments the caller may see (filters xform, merged_xform, dataview, instance, type; page, page_size ≤ 10000). Link and X-Total-Count headers.',
  })
  @ApiOkResponse({ type: MediaJson, isArray: true })
  async list(@CurrentUser() user: AuthenticatedUser, @Query() query: MediaListQueryDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<MediaJson[]> {
    const filters = mediaFilters(query);
    const page = pageRequest(query);
    const base = requestBaseUrl(req, this.config);
    const { items, total } = await this.media.list(user, filters, page, base);
    for (const [k, v] of Object.entries(pageHeaders(`${base}${req.originalUrl}`, page.page, page.pageSize, total))) res.setHeader(k, v);
    return items;
  }

  @Get('media/count')
  @ApiOperation({ summary: 'Number of attachments matching the same filters: `{"count": N}`.' })
  @ApiOkResponse({ type: MediaCount })
  async count(@CurrentUser() user: AuthenticatedUser, @Query() query: MediaFilterQueryDto): Promise<MediaCount> {
    return { count: await this.media.count(user, mediaFilters(query)) };
  }

  @Get('media/:pk')
  @ApiOperation({
    summary:
      'One attachment as JSON; `{pk}.{ext}` or `Accept: <its content type>` streams the file; `{pk}-small|-medium|-large.{ext}` streams an image variant. Range, ETag/If-None-Match, Content-Disposition.',
  })
  @ApiExtraModels(MediaJson)
  @ApiProduces('application/json', 'application/octet-stream')
  @ApiOkResponse({ schema: { oneOf: [{ $ref: getSchemaPath(MediaJson) }, { type: 'string', format: 'binary', description: 'The file or image variant (its own content type; 206 for a Range).' }] } })
  async one(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const spec = parseMediaPathSegment(pk);
    if (!spec) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const a = await this.media.visible(user, spec.id);
    const asJson = spec.ext === 'json' && !MediaService.extensionFits(a, 'json', spec.variant);
    if (asJson || (!spec.ext && !spec.variant && !acceptsExactly(req.headers.accept, a.mimetype))) {
      if (spec.variant) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
      res.json(MediaService.detail(a, requestBaseUrl(req, this.config)));
      return;
    }
    if (spec.ext && !MediaService.extensionFits(a, spec.ext, spec.variant)) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    await sendStoredFile(req, res, this.storage, await this.media.downloadTarget(a, spec.variant, requesterOf(user, req)), this.downloadOptions());
  }

  @Get('files/:pk')
  @ApiOperation({ summary: 'Download by id and stored filename (`?filename=` must match, else 404); `&suffix=small|medium|large` for image variants.' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ schema: { type: 'string', format: 'binary', description: 'The file or image variant (its own content type; 206 for a Range; a 302 to a signed URL with MEDIA_S3_SIGNED_REDIRECT).' } })
  async file(
    @CurrentUser() user: AuthenticatedUser,
    @Param('pk') pk: string,
    @Query() query: FileQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const id = /^\d{1,10}$/.test(pk) ? Number(pk) : NaN;
    if (!(id >= 1 && id <= 2_147_483_647)) throw new BadRequestException({ detail: invalidIdMessage('pk') });
    const a = await this.media.visible(user, id);
    if (a.filename !== query.filename) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    await sendStoredFile(req, res, this.storage, await this.media.downloadTarget(a, query.suffix ?? null, requesterOf(user, req)), this.downloadOptions());
  }

  private downloadOptions(): DownloadOptions {
    const presign = this.storage.presignGet?.bind(this.storage);
    if (!this.config.MEDIA_S3_SIGNED_REDIRECT || !presign) return {};
    return {
      presign: (target) =>
        // The object store serves these headers itself (it cannot send a CSP): the type must be inert on its own.
        presign(target.path, { expiresInSeconds: this.config.MEDIA_S3_SIGNED_URL_TTL_SECONDS, contentType: servedContentType(target.mimetype), contentDisposition: contentDisposition(target.downloadName) }),
    };
  }
}

/** Whose quota on-demand work counts against: the user, or the address of an anonymous caller. */
function requesterOf(user: AuthenticatedUser | undefined, req: Request): string {
  return user ? `user:${user.id}` : `ip:${requestAddress(req)}`;
}
