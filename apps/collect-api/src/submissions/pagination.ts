import { FieldValidationError } from '@collect/contracts';

export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10_000;

/** `page` (1-based) and `page_size` (default 1000, at most 10000), as the media listing pages. */
export function parsePage(query: Record<string, unknown>): { page: number; pageSize: number } {
  const errors: Record<string, string[]> = {};
  const read = (name: string, fallback: number, max: number) => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
      errors[name] = ['A positive integer.'];
      return fallback;
    }
    return Math.min(Number(raw), max);
  };
  const page = read('page', 1, 1_000_000_000);
  const pageSize = read('page_size', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (Object.keys(errors).length) throw new FieldValidationError(errors);
  return { page, pageSize };
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
