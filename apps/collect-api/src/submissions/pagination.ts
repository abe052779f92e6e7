import { Int, Text } from '@collect/contracts';
import { MAX_QUERY_TEXT } from './data-query.js';
import type { PageRequest } from './submissions.service.js';

export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10_000;

const POSITIVE = 'A positive integer.';

/** `page` (1-based) and `page_size` (default 1000, larger values count as 10000), as the media listing pages. */
export class PageQueryDto {
  @Int({ min: 1, max: 999_999_999, blankIsMissing: true, message: POSITIVE, default: 1 })
  page?: number;

  @Int({ min: 1, max: 999_999_999, blankIsMissing: true, message: POSITIVE, default: DEFAULT_PAGE_SIZE, description: `At most ${MAX_PAGE_SIZE}; larger values count as ${MAX_PAGE_SIZE}.` })
  page_size?: number;
}

export function pageRequest(query: PageQueryDto): PageRequest {
  return { page: query.page ?? 1, pageSize: Math.min(query.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE) };
}

/** Shared with the listings below submissions in the layer order (wire-formats/page-headers.ts). */
export { pageHeaders } from '../wire-formats/page-headers.js';

/**
 * `GET /api/v1/data/{pk}`: the page, or `start` (offset) and `limit` beside it, and the data
 * query (docs/data-api.md). The JSON parameters are parsed by data-query.ts (caps, 400s naming
 * the parameter).
 */
export class DataQueryDto extends PageQueryDto {
  @Int({ min: 0, max: 2_000_000_000, blankIsMissing: true, message: 'A non-negative integer.', description: 'Offset paging: rows to skip (with `limit`; `page`/`page_size` are then ignored).' })
  start?: number;

  @Int({ min: 1, max: 999_999_999, blankIsMissing: true, message: POSITIVE, description: `Offset paging: at most this many rows (larger values count as ${MAX_PAGE_SIZE}).` })
  limit?: number;

  @Text({ max: MAX_QUERY_TEXT, description: 'JSON object: `{"age": {"$gt": 20}, "district": "north"}`; operators $eq $ne $gt $gte $lt $lte $in; also on _id, _submission_time, _submitted_by.' })
  query?: string;

  @Text({ max: MAX_QUERY_TEXT, description: 'JSON object of fields to 1 (ascending) or -1 (descending): `{"age": -1}`.' })
  sort?: string;

  @Text({ max: MAX_QUERY_TEXT, description: 'JSON array of the keys to return (`_id` is always returned): `["name", "_submission_time"]`.' })
  fields?: string;
}

/** Offset and limit of a data request: `start`/`limit` when either is given, else the page. */
export function dataWindow(query: DataQueryDto): { offset: number; limit: number; page: number | null } {
  if (query.start !== undefined || query.limit !== undefined) {
    return { offset: query.start ?? 0, limit: Math.min(query.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), page: null };
  }
  const { page, pageSize } = pageRequest(query);
  return { offset: (page - 1) * pageSize, limit: pageSize, page };
}
