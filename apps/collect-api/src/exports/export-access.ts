import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { MediaService } from '../media/media.service.js';
import type { ExportJobFormat } from './export-job.entity.js';
import { ExportsService } from './exports.service.js';

/**
 * Who may ask for and read an asynchronous export (docs/exports.md, "Asynchronous exports"): the
 * caller holds the roles of the listing the export mirrors, the media listing's for a zip and
 * the data listing's otherwise, and gets that listing's 404 or 403.
 */
@Injectable()
export class ExportAccess {
  constructor(
    private readonly exports: ExportsService,
    private readonly media: MediaService,
  ) {}

  async check(user: AuthenticatedUser, format: ExportJobFormat, formPk: number): Promise<void> {
    if (format === 'zip') await this.media.resolveFilter(user, { xform: formPk });
    else await this.exports.source(user, { kind: 'form', pk: formPk });
  }
}
