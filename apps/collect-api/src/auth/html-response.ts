import type { HttpResponse } from './http-types.js';

/**
 * Headers of every server-rendered page and redirect (/o/ pages, CAS sign-in): never cached,
 * never framed, no referrer carrying codes or state. No form-action: the consent POST ends in a
 * redirect to the client, which it would block.
 */
function pageSecurityHeaders(res: HttpResponse, scriptHashes: readonly string[] = []): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  const scripts = scriptHashes.length ? `; script-src ${scriptHashes.map((h) => `'${h}'`).join(' ')}` : '';
  res.setHeader('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'${scripts}`);
}

/**
 * A page; `scriptHashes` (`sha256-<base64>`) allow exactly those inline scripts of the page and
 * no other script (the /tokens page's copy button).
 */
export function sendHtml(res: HttpResponse, status: number, body: string, scriptHashes: readonly string[] = []): void {
  pageSecurityHeaders(res, scriptHashes);
  res.status(status).type('html').send(body);
}

export function sendRedirect(res: HttpResponse, location: string, status = 302): void {
  pageSecurityHeaders(res);
  res.redirect(status, location);
}
