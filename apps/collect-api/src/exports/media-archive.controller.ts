import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { ReadSlots } from '../database/read-slots.js';
import { mediaFilters } from '../media/media-query.js';
import { MediaRepository } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { setInertHeaders } from '../storage/served-content.js';
import { archiveTime, MediaArchiveQueryDto } from './export.dto.js';
import { EXPORT_CONTENT_TYPES } from './exports.controller.js';
import { writeMediaArchive } from './media-archive.js';

/** `GET /api/v1/media.zip` (docs/media.md, "Media archives"): the listing's files as one streamed ZIP. */
@ApiTags('media')
@RequireAuth()
@Controller('api/v1')
export class MediaArchiveController {
  constructor(
    private readonly media: MediaService,
    private readonly repo: MediaRepository,
    private readonly slots: ReadSlots,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  @Get('media.zip')
  @ApiOperation({ summary: 'The files the media listing would list (same filters and roles) plus submitted_after/submitted_before, as a ZIP of `<instance uuid>/<filename>`.' })
  @ApiProduces(EXPORT_CONTENT_TYPES.zip)
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' } })
  async archive(@CurrentUser() user: AuthenticatedUser, @Query() query: MediaArchiveQueryDto, @Res() res: ServerResponse): Promise<void> {
    // A slot (docs/security.md, "Streamed reads and heavy queries"): the per-user limit and the
    // deadline of a response that does not drain.
    await this.slots.open(user.id, res);
    const after = archiveTime('submitted_after', query.submitted_after);
    const before = archiveTime('submitted_before', query.submitted_before);
    const filter = { ...(await this.media.resolveFilter(user, mediaFilters(query))), submittedAfter: after, submittedBefore: before };
    res.statusCode = 200;
    res.setHeader('Content-Type', EXPORT_CONTENT_TYPES.zip);
    setInertHeaders(res, 'media.zip');
    try {
      await writeMediaArchive(this.repo.archiveEntries(filter), this.storage, res);
    } catch {
      res.destroy();
    }
  }
}
