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
