import { Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { FormsService } from '../forms/forms.service.js';
import { EntityAttachmentsService } from '../entity-attachments/entity-attachments.service.js';
import { escapeXml } from '../openrosa/xml.js';
import { MetadataService } from './metadata.service.js';

/**
 * What the OpenRosa manifest and media routes answer (docs/forms.md, "Form media and the
 * OpenRosa manifest"): the form a path names, the manifest document, the stored file of a media id.
 */
@Injectable()
export class OpenRosaManifestService {
  constructor(
    private readonly metadata: MetadataService,
    private readonly entityLists: EntityAttachmentsService,
    private readonly forms: FormsService,
    private readonly formsRepo: FormsRepository,
    private readonly config: CollectConfig,
  ) {}

  /** The form, when it is visible to the caller (readonly and above). */
  form(user: AuthenticatedUser, pk: string): Promise<FormEntity> {
    return this.forms.getDocument(user, pk);
  }

  /** The form, when it is visible to the caller and belongs to `username` (another owner's form under the name: 404). */
  async ownerForm(user: AuthenticatedUser, username: string, pk: string): Promise<FormEntity> {
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
  async manifestXml(form: FormEntity, downloadPath: (mediaId: number | string) => string): Promise<string> {
    const [media, lists] = await Promise.all([this.metadata.ofForm(form), this.entityLists.ofForm(form)]);
    const listed = new Set(lists.map((l) => l.filename));
    const url = (path: string) => escapeXml(`${this.config.PUBLIC_BASE_URL}${path}`);
    const files = media.filter((row) => !listed.has(row.dataValue)).map((row) =>
      `<mediaFile><filename>${escapeXml(row.dataValue)}</filename><hash>${row.fileHash}</hash><downloadUrl>${url(downloadPath(row.id))}</downloadUrl></mediaFile>`,
    );
    for (const l of lists) {
      files.push(`<mediaFile type="entityList"><filename>${escapeXml(l.filename)}</filename><hash>${l.hash}</hash><downloadUrl>${url(downloadPath(`entity-list/${encodeURIComponent(l.filename)}`))}</downloadUrl></mediaFile>`);
    }
    return `<?xml version="1.0" encoding="UTF-8"?><manifest xmlns="http://openrosa.org/xforms/xformsManifest">${files.join('')}</manifest>`;
  }

  /** The stored file of media id `mediaId` of the form: its storage path, type and download name. */
  async mediaFile(form: FormEntity, mediaId: string): Promise<{ path: string; mimetype: string; downloadName: string }> {
    const row = await this.metadata.fileOf(form, mediaId);
    return { path: row.dataFile, mimetype: row.dataFileType, downloadName: row.dataValue };
  }
}
