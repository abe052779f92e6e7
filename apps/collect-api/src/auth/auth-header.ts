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

/**
 * What the scheme's package refused with before its verify callback ran: 400 for a malformed
 * header, 401 (with the challenge) for an empty or missing credential.
 */
export type RefusedUnchecked = 400 | 401;

/**
 * The user id passport-http 0.3's `BasicStrategy.authenticate` hands its verify callback, or what
 * it refused with first (lib/passport-http/strategies/basic.js, ported line by line): the guard
 * calls `BasicStrategy.validate` directly (auth.guard.ts says why), and refuses what the package
 * refused. It splits the raw header on one space, so a tab or a double space before the
 * credential is a 400 even where parseAuthorization accepts it; a pair without a colon is a 400;
 * an empty user id or an empty second colon-separated piece (`user:`, `user::pass`) is a 401.
 */
export function basicUserid(header: string): string | RefusedUnchecked {
  const parts = header.split(' ');
  if (parts.length < 2) return 400;
  const pieces = Buffer.from(parts[1]!, 'base64').toString().split(':');
  if (!/Basic/i.test(parts[0]!)) return 401;
  if (pieces.length < 2) return 400;
  if (!pieces[0] || !pieces[1]) return 401;
  return pieces[0];
}

/**
 * The token passport-http-bearer 1.0's `Strategy.authenticate` hands its verify callback, or what
 * it refused with first (lib/strategy.js; the guard calls `BearerStrategy.validate` directly and
 * only for a header it read as Bearer): a header not made of exactly two space-separated words is
 * a 400, so is an `access_token` in the body or query beside the header (RFC 6750 §2: one method
 * per request); no token is a 401. One departure: where the package finds no header token
 * (`Bearer<TAB>x y`, which parseAuthorization reads as Bearer) it would use a body or query
 * token; a token from the URL ends up in logs, so it is refused here too (docs/auth.md).
 */
export function bearerToken(req: { headers: { authorization?: string }; body?: unknown; query?: unknown }): string | RefusedUnchecked {
  const parts = (req.headers.authorization ?? '').split(' ');
  if (parts.length !== 2) return 400;
  const inBody = (req.body as { access_token?: unknown } | null | undefined)?.access_token;
  const inQuery = (req.query as { access_token?: unknown } | null | undefined)?.access_token;
  if (inBody || inQuery) return 400;
  if (!/^Bearer$/i.test(parts[0]!) || !parts[1]) return 401;
  return parts[1];
}
