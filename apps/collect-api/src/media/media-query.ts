import { IntersectionType } from '@nestjs/swagger';
import { Choice, Int, MAX_DB_ID, Text } from '@collect/contracts';
import { PageQueryDto } from '../submissions/pagination.js';
import { MEDIA_TYPES, type MediaType } from './media.repository.js';
import { VARIANT_NAMES, type VariantName } from '../wire-formats/media-urls.js';

/** The filters of `GET /api/v1/media` and `/media/count`, validated (docs/api-conventions.md §Media). */
export interface MediaQuery {
  xform?: number;
  mergedXform?: number;
  dataview?: number;
  instance?: number;
  type?: MediaType;
}

export function invalidIdMessage(label: string): string {
  return `Invalid value for ${label}. It must be a positive integer.`;
}

/** Ids are positive integers (at most 2^31-1); a bad one answers `{"detail": ...}` as documented (docs/media.md). */
const id = (label: string, description: string) => Int({ min: 1, max: MAX_DB_ID, message: invalidIdMessage(label), asDetail: true, description });
const TYPES = [...MEDIA_TYPES, 'file'];

/** The filters of `GET /api/v1/media/count` (and the listing). Unknown parameters are ignored. */
export class MediaFilterQueryDto {
  // `xform` keeps DRF's "formid" wording in its message.
  @id('formid', 'Attachments of this form.')
  xform?: number;

  @id('merged_xform', 'Attachments of the forms of this merged dataset.')
  merged_xform?: number;

  @id('dataview', 'Attachments of the submissions this dataview selects.')
  dataview?: number;

  @id('instance', 'Attachments of this submission.')
  instance?: number;

  @Choice(TYPES, { normalise: (t) => t.toLowerCase(), message: `Invalid value for type. It must be one of ${TYPES.join(', ')}.`, asDetail: true, description: 'By mimetype family; `file` is an alias of `document`.' })
  type?: string;
}

/** `GET /api/v1/media`: the filters and the page. */
export class MediaListQueryDto extends IntersectionType(MediaFilterQueryDto, PageQueryDto) {}

/** The filters a validated query asks for. */
export function mediaFilters(query: MediaFilterQueryDto): MediaQuery {
  const out: MediaQuery = {};
  if (query.xform !== undefined) out.xform = query.xform;
  if (query.merged_xform !== undefined) out.mergedXform = query.merged_xform;
  if (query.dataview !== undefined) out.dataview = query.dataview;
  if (query.instance !== undefined) out.instance = query.instance;
  if (query.type !== undefined) out.type = query.type === 'file' ? 'document' : (query.type as MediaType);
  return out;
}

/** `GET /api/v1/files/{pk}`. */
export class FileQueryDto {
  @Text({ required: true, blank: 'missing', description: 'The stored filename; any other answers 404.' })
  filename: string;

  @Choice(VARIANT_NAMES, { choiceMessage: `One of ${VARIANT_NAMES.join(', ')}.`, description: 'An image variant.' })
  suffix?: VariantName;
}

/** Download addresses use the `/files` style in listings by merged dataset or dataview (spec §2.3). */
export function listingUsesFilesStyle(q: MediaQuery): boolean {
  return q.mergedXform !== undefined || q.dataview !== undefined;
}

/** `field_xpath` appears in listings by merged dataset, dataview and type (spec §2.3). */
export function listingShowsFieldXpath(q: MediaQuery): boolean {
  return listingUsesFilesStyle(q) || q.type !== undefined;
}

/** Whether an `Accept` header names exactly this content type (wildcards do not count). */
export function acceptsExactly(accept: string | undefined, mimetype: string): boolean {
  if (!accept) return false;
  const wanted = mimetype.toLowerCase();
  return accept.split(',').some((part) => {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return range === wanted && !(q && Number(q.slice(2)) === 0);
  });
}
