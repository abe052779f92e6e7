import { Int } from '@collect/contracts';
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

/** `Link` (rel next/prev) and `X-Total-Count` for a paged listing at `url`. */
export function pageHeaders(url: string, page: number, pageSize: number, total: number): Record<string, string> {
  const at = (p: number) => {
    const u = new URL(url);
    u.searchParams.set('page', String(p));
    u.searchParams.set('page_size', String(pageSize));
    return u.toString();
  };
  const links: string[] = [];
  if (page * pageSize < total) links.push(`<${at(page + 1)}>; rel="next"`);
  if (page > 1) links.push(`<${at(page - 1)}>; rel="prev"`);
  return { 'X-Total-Count': String(total), ...(links.length ? { Link: links.join(', ') } : {}) };
}
