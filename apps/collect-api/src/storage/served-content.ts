/**
 * Answers that carry user-supplied bytes (attachments, XForms, the form list) are inert
 * (docs/security.md, "Inert served content"): no script, no plugin, no same-origin document
 * even when a browser opens them, and never sniffed into something else.
 */
export const INERT_CSP = "default-src 'none'; sandbox";

/**
 * Types a browser runs as a document or script: HTML, XHTML, SVG, any XML (an XHTML namespace
 * inside it runs script), JavaScript, CSS, Flash.
 */
const ACTIVE = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|text\/xsl|application\/xslt\+xml|text\/javascript|application\/javascript|application\/x-javascript|application\/ecmascript|text\/ecmascript|text\/css|application\/x-shockwave-flash|multipart\/x-mixed-replace)$|\+xml$/;

export function isActiveContentType(type: string): boolean {
  return ACTIVE.test(type.split(';')[0].trim().toLowerCase());
}

/** The Content-Type a stored file is served with: an active type (whatever stored it) becomes application/octet-stream. */
export function servedContentType(stored: string): string {
  return isActiveContentType(stored) ? 'application/octet-stream' : stored;
}

/** `attachment; filename="..."` with an ASCII fallback and RFC 6266 `filename*` for the rest. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return ascii === name ? `attachment; filename="${ascii}"` : `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** CSP sandbox and nosniff, plus attachment disposition under `downloadName` when given. */
export function setInertHeaders(res: { setHeader(name: string, value: string): unknown }, downloadName?: string): void {
  res.setHeader('Content-Security-Policy', INERT_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (downloadName !== undefined) res.setHeader('Content-Disposition', contentDisposition(downloadName));
}
