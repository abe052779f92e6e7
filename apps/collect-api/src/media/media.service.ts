import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import mime from 'mime-types';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import type { CompiledWhere } from '../datasets/dataview-query.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { MIN_ROLE } from '../forms/roles.js';
import type { PageRequest } from '../submissions/submissions.service.js';
import { SubmissionsRepository } from '../submissions/submissions.repository.js';
import type { AttachmentEntity } from '../submissions/submission.entity.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import type { DownloadTarget } from './media-download.js';
import { listingShowsFieldXpath, listingUsesFilesStyle, type MediaQuery } from './media-query.js';
import { extensionOf, mediaDownloadUrls, mediaRecordUrl, type MediaUrlStyle, type VariantName } from '../wire-formats/media-urls.js';
import { MediaVariantsService, hasVariants } from './media-variants.service.js';
import { MediaRepository, type MediaFilter } from './media.repository.js';
import type { MediaJson } from './media.dto.js';

/** An attachment as §2.3 shows it. */
export function mediaJson(a: AttachmentEntity, baseUrl: string, style: MediaUrlStyle, withFieldXpath: boolean): MediaJson {
  return {
    id: a.id,
    url: mediaRecordUrl(a.id, baseUrl),
    filename: a.filename,
    mimetype: a.mimetype,
    xform: a.formId,
    instance: a.submissionId,
    ...mediaDownloadUrls(a, baseUrl, style),
    ...(withFieldXpath ? { field_xpath: a.fieldXpath } : {}),
  };
}

/**
 * Media rules: which attachments a caller sees (readonly or above on the form, through
 * FormAccessService; merged datasets and dataviews through DatasetsService), the filters, and
 * what a download address resolves to (original or image variant).
 */
@Injectable()
export class MediaService {
  constructor(
    private readonly repo: MediaRepository,
    private readonly access: FormAccessService,
    private readonly datasets: DatasetsService,
    private readonly submissions: SubmissionsRepository,
    private readonly variants: MediaVariantsService,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  /**
   * The filter the caller may use: every given filter narrows the set of forms (a form,
   * merged dataset, dataview or instance the caller cannot see answers 404); none given means
   * every form the caller can see.
   */
  async resolveFilter(user: AuthenticatedUser | undefined, q: MediaQuery): Promise<MediaFilter> {
    const sets: number[][] = [];
    let dataview: CompiledWhere | undefined;
    if (q.xform !== undefined) sets.push([(await this.access.requireRole(user, q.xform, MIN_ROLE.view)).form.id]);
    if (q.mergedXform !== undefined) sets.push(await this.datasets.mergedFormIds(user, q.mergedXform));
    if (q.dataview !== undefined) {
      const view = await this.datasets.dataviewFilter(user, q.dataview, 's');
      sets.push([view.formId]);
      dataview = view.where;
    }
    if (q.instance !== undefined) {
      const submission = await this.submissions.findAny(q.instance);
      if (!submission || submission.deletedAt) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
      sets.push([(await this.access.requireRole(user, submission.formId, MIN_ROLE.view)).form.id]);
    }
    if (!sets.length) sets.push(await this.access.visibleFormIds(user));
    const formIds = sets.reduce((acc, s) => acc.filter((id) => s.includes(id)));
    return { formIds: [...new Set(formIds)], instanceId: q.instance, dataview, type: q.type };
  }

  async list(user: AuthenticatedUser | undefined, q: MediaQuery, page: PageRequest, baseUrl: string): Promise<{ items: MediaJson[]; total: number }> {
    const filter = await this.resolveFilter(user, q);
    const [rows, total] = await Promise.all([this.repo.page(filter, (page.page - 1) * page.pageSize, page.pageSize), this.repo.count(filter)]);
    if (page.page > 1 && !rows.length) throw new NotFoundException({ detail: 'Invalid page.' });
    const style = listingUsesFilesStyle(q) ? 'files' : 'media';
    const withXpath = listingShowsFieldXpath(q);
    return { items: rows.map((a) => mediaJson(a, baseUrl, style, withXpath)), total };
  }

  async count(user: AuthenticatedUser | undefined, q: MediaQuery): Promise<number> {
    return this.repo.count(await this.resolveFilter(user, q));
  }

  /** A live attachment of a live form the caller may see (readonly or above), else 404. */
  async visible(user: AuthenticatedUser | undefined, id: number): Promise<AttachmentEntity> {
    const a = await this.repo.findLive(id);
    // Unknown ids and forms the caller cannot see answer alike (requireRole: 401 anonymous, 404).
    await this.access.requireRole(user, a ? a.formId : 'none', MIN_ROLE.view);
    return a!;
  }

  /** The JSON record of a visible attachment (`GET /media/{pk}`): media-style URLs, no field_xpath. */
  static detail(a: AttachmentEntity, baseUrl: string): MediaJson {
    return mediaJson(a, baseUrl, 'media', false);
  }

  /** Whether `ext` names this file (its own extension or one registered for its type). */
  static extensionFits(a: AttachmentEntity, ext: string, variant: VariantName | null): boolean {
    const own = extensionOf(a.filename);
    const known = (mime.extensions[a.mimetype] ?? []).map((e) => e.toLowerCase());
    const variantExt = variant && hasVariants(a.mimetype) ? MediaVariantsService.variantPath(a, variant).split('.').pop() : undefined;
    return ext === own || known.includes(ext) || ext === variantExt;
  }

  /**
   * What to stream for an attachment: the original, or an image variant (made on first use).
   * Non-images have no variants: their variant addresses serve the original.
   */
  async downloadTarget(a: AttachmentEntity, variant: VariantName | null, requester?: string): Promise<DownloadTarget> {
    const downloadName = a.filename.slice(a.filename.lastIndexOf('/') + 1);
    if (!variant || !hasVariants(a.mimetype)) return { path: a.filename, mimetype: a.mimetype, downloadName };
    if (!(await this.storage.exists(a.filename))) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return this.variants.variant(a, variant, requester);
  }
}
