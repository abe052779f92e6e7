import type { CollectConfig } from '../config/collect-config.js';

/** Variant names of docs/api-conventions.md §Media (longest side in pixels). */
export const VARIANT_SIZES = { small: 240, medium: 640, large: 1280 } as const;
export type VariantName = keyof typeof VARIANT_SIZES;
export const VARIANT_NAMES = Object.keys(VARIANT_SIZES) as VariantName[];

export function isVariantName(v: unknown): v is VariantName {
  return typeof v === 'string' && Object.hasOwn(VARIANT_SIZES, v);
}

/**
 * The two download address styles of spec §2.3:
 * - `files`: `{base}/api/v1/files/<id>?filename=<filename>[&suffix=small|medium]` (listings by
 *   merged dataset or dataview, and the `_attachments` of the §2.2 submission JSON);
 * - `media`: `{base}/api/v1/media/<id>.<ext>` with `-small`/`-medium` before the extension.
 */
export type MediaUrlStyle = 'files' | 'media';

export interface MediaUrlSource {
  id: number;
  filename: string;
}

export interface MediaDownloadUrls {
  download_url: string;
  small_download_url: string;
  medium_download_url: string;
}

/** The one place media download addresses are built (media listings and submission JSON). */
export function mediaDownloadUrls(a: MediaUrlSource, baseUrl: string, style: MediaUrlStyle): MediaDownloadUrls {
  if (style === 'files') {
    const download = `${baseUrl}/api/v1/files/${a.id}?filename=${encodeURIComponent(a.filename)}`;
    return { download_url: download, small_download_url: `${download}&suffix=small`, medium_download_url: `${download}&suffix=medium` };
  }
  const ext = extensionOf(a.filename);
  const at = (suffix: string) => `${baseUrl}/api/v1/media/${a.id}${suffix}${ext ? `.${ext}` : ''}`;
  return { download_url: at(''), small_download_url: at('-small'), medium_download_url: at('-medium') };
}

/** Address of the attachment record (`url` of §2.3). */
export function mediaRecordUrl(id: number, baseUrl: string): string {
  return `${baseUrl}/api/v1/media/${id}`;
}

/**
 * The extension of a stored file name, lower-cased, as it appears in `media/<id>.<ext>`;
 * empty when the name has none. Only URL-safe extensions count (names are sanitised on intake).
 */
export function extensionOf(filename: string): string {
  const base = filename.slice(filename.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || dot === base.length - 1) return '';
  const ext = base.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,10}$/.test(ext) ? ext : '';
}

/** `media/{pk}` path segment forms: `12`, `12.jpg`, `12-small.jpg`, `12-medium`, `12.json`. */
export interface MediaPathSpec {
  id: number;
  variant: VariantName | null;
  ext: string | null;
}

export function parseMediaPathSegment(segment: string): MediaPathSpec | null {
  const m = /^(\d{1,10})(?:-(small|medium|large))?(?:\.([A-Za-z0-9]{1,10}))?$/.exec(segment);
  if (!m) return null;
  const id = Number(m[1]);
  if (id < 1 || id > 2_147_483_647) return null;
  return { id, variant: (m[2] as VariantName | undefined) ?? null, ext: m[3]?.toLowerCase() ?? null };
}

/** Request headers the public base address may come from. */
export interface BaseUrlRequest {
  headers: Record<string, string | string[] | undefined>;
}

const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function firstHeader(req: BaseUrlRequest, name: string): string | undefined {
  const raw = req.headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  // A chain of proxies appends: the first entry is what the client used.
  return value?.split(',')[0]?.trim() || undefined;
}

/**
 * `{base_url}` of a request: `X-Forwarded-Proto` + `X-Forwarded-Host` when the operator trusts
 * them (TRUST_FORWARDED_HEADERS, set behind an ingress that overwrites them) and they are
 * well-formed; PUBLIC_BASE_URL otherwise. Untrusted or malformed headers never reach a URL.
 */
export function requestBaseUrl(req: BaseUrlRequest, config: Pick<CollectConfig, 'PUBLIC_BASE_URL' | 'TRUST_FORWARDED_HEADERS'>): string {
  if (config.TRUST_FORWARDED_HEADERS) {
    const host = firstHeader(req, 'x-forwarded-host');
    const proto = (firstHeader(req, 'x-forwarded-proto') ?? 'https').toLowerCase();
    if (host && HOST_RE.test(host) && (proto === 'http' || proto === 'https')) return `${proto}://${host}`;
  }
  return config.PUBLIC_BASE_URL;
}
