import type { HttpResponse } from './http-types.js';

/**
 * Headers of every server-rendered page and redirect (/o/ pages, CAS sign-in): never cached,
 * never framed, no referrer carrying codes or state. No form-action: the consent POST ends in a
 * redirect to the client, which it would block.
 */
function pageSecurityHeaders(res: HttpResponse): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");
}

export function sendHtml(res: HttpResponse, status: number, body: string): void {
  pageSecurityHeaders(res);
  res.status(status).type('html').send(body);
}

export function sendRedirect(res: HttpResponse, location: string, status = 302): void {
  pageSecurityHeaders(res);
  res.redirect(status, location);
}
