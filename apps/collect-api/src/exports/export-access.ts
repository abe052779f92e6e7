import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { EntityListAccess } from '../entities/lists/entity-list-access.js';
import { MediaService } from '../media/media.service.js';
import type { ExportJobFormat } from './export-job.entity.js';
import { ExportsService } from './exports.service.js';

/**
 * Who may ask for and read an asynchronous export (docs/exports.md, "Asynchronous exports"): the
 * caller holds the roles of the listing the export mirrors, the media listing's for a zip, the
 * entity list's own for a list and the data listing's otherwise, and gets that listing's 404 or 403.
 */
@Injectable()
export class ExportAccess {
  constructor(
    private readonly exports: ExportsService,
    private readonly media: MediaService,
    private readonly lists: EntityListAccess,
  ) {}

  /** `subject`: the form, or the entity list (read as its own downloads are: EntityListAccess.readable). */
  async check(user: AuthenticatedUser, format: ExportJobFormat, subject: { formId: number | null; entityListId?: number | null }): Promise<void> {
    if (subject.entityListId != null) await this.lists.readable(user, String(subject.entityListId));
    else if (format === 'zip') await this.media.resolveFilter(user, { xform: subject.formId! });
    else await this.exports.source(user, { kind: 'form', pk: subject.formId! });
  }
}
