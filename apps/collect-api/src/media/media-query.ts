import { BadRequestException } from '@nestjs/common';
import { MEDIA_TYPES, type MediaType } from './media.repository.js';

/** The filters of `GET /api/v1/media` and `/media/count`, validated (decisions.md §Media). */
export interface MediaQuery {
  xform?: number;
  mergedXform?: number;
  dataview?: number;
  instance?: number;
  type?: MediaType;
}

/** Query parameter → the name its 400 message uses (`xform` keeps DRF's "formid" wording). */
const ID_PARAMS: Array<[param: string, key: keyof MediaQuery, label: string]> = [
  ['xform', 'xform', 'formid'],
  ['merged_xform', 'mergedXform', 'merged_xform'],
  ['dataview', 'dataview', 'dataview'],
  ['instance', 'instance', 'instance'],
];

const TYPE_ALIASES: Record<string, MediaType> = { image: 'image', audio: 'audio', video: 'video', document: 'document', file: 'document' };

export function invalidIdMessage(label: string): string {
  return `Invalid value for ${label}. It must be a positive integer.`;
}

/**
 * Parses the filters; any present one must be valid, else 400 `{"detail": ...}`:
 * ids are positive integers (at most 2^31-1), `type` one of image/audio/video/document/file.
 */
export function parseMediaQuery(query: Record<string, unknown>): MediaQuery {
  const out: MediaQuery = {};
  for (const [param, key, label] of ID_PARAMS) {
    const raw = query[param];
    if (raw === undefined) continue;
    const n = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= 1 && n <= 2_147_483_647)) throw new BadRequestException({ detail: invalidIdMessage(label) });
    (out as Record<string, number>)[key] = n;
  }
  if (query.type !== undefined) {
    const t = typeof query.type === 'string' ? TYPE_ALIASES[query.type.toLowerCase()] : undefined;
    if (!t) throw new BadRequestException({ detail: `Invalid value for type. It must be one of ${[...MEDIA_TYPES, 'file'].join(', ')}.` });
    out.type = t;
  }
  return out;
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
