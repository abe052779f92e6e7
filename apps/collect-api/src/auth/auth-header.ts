import type { AuthScheme } from './authenticated-user.js';

/** The `Authorization` header split into scheme and credentials, or a reason it is malformed. */
export type ParsedAuthorization =
  | { kind: 'none' }
  | { kind: 'credentials'; scheme: AuthScheme; credentials: string }
  | { kind: 'malformed'; scheme: AuthScheme; detail: string };

const SCHEMES: Record<string, AuthScheme> = { basic: 'basic', token: 'token', temptoken: 'temptoken', bearer: 'bearer' };

/**
 * Mirrors DRF's header parsing: an unknown scheme word is ignored (the request is anonymous),
 * a known scheme with no credentials or with spaces in them is malformed (401).
 */
export function parseAuthorization(header: string | undefined): ParsedAuthorization {
  if (!header) return { kind: 'none' };
  const parts = header.trim().split(/\s+/);
  const scheme = SCHEMES[parts[0]!.toLowerCase()];
  if (!scheme) return { kind: 'none' };
  const what = scheme === 'basic' ? 'basic' : 'token';
  if (parts.length === 1) return { kind: 'malformed', scheme, detail: `Invalid ${what} header. No credentials provided.` };
  if (parts.length > 2) {
    return { kind: 'malformed', scheme, detail: `Invalid ${what} header. ${scheme === 'basic' ? 'Credentials' : 'Token'} string should not contain spaces.` };
  }
  // passport-http decodes any text leniently; DRF refuses what is not base64.
  if (scheme === 'basic' && !BASE64.test(parts[1]!)) return { kind: 'malformed', scheme, detail: BASIC_NOT_BASE64 };
  return { kind: 'credentials', scheme, credentials: parts[1]! };
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
export const BASIC_NOT_BASE64 = 'Invalid basic header. Credentials not correctly base64 encoded.';

/** `user:pass` from a Basic credential, or null when it is not valid base64 with a colon. */
export function decodeBasic(credentials: string): { username: string; password: string } | null {
  if (!BASE64.test(credentials)) return null;
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** What a 401 names in `WWW-Authenticate` for each scheme (docs/api-conventions.md §Errors). */
export const WWW_AUTHENTICATE: Record<AuthScheme, string> = {
  basic: 'Basic realm="api"',
  token: 'Token',
  temptoken: 'TempToken',
  bearer: 'Bearer',
};
