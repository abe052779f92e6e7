/**
 * Why a token was refused. Each code maps to one rule of spec §5.3 (docs/jwt-validation.md, "Rules, in the order they run"), so a client (and
 * an operator reading logs) can tell which rule failed without seeing the token.
 */
export type JwtErrorCode =
  | 'token_too_large'
  | 'token_malformed'
  | 'alg_not_allowed'
  | 'typ_not_allowed'
  | 'crit_unsupported'
  | 'kid_missing'
  | 'kid_unknown'
  | 'signature_invalid'
  | 'issuer_mismatch'
  | 'audience_mismatch'
  | 'token_expired'
  | 'token_not_yet_valid'
  | 'token_issued_in_future'
  | 'claim_missing'
  | 'claim_invalid';

/** The token is not acceptable (a 401 for an HTTP API). `message` is safe to show the caller. */
export class JwtValidationError extends Error {
  constructor(
    public readonly code: JwtErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'JwtValidationError';
  }
}

/**
 * The issuer's keys could not be obtained and none are cached: the token may be fine, we just
 * cannot tell (a 503 for an HTTP API, not a 401 that would make clients drop good tokens).
 */
export class KeySourceUnavailableError extends Error {
  constructor(
    message: string,
    public readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'KeySourceUnavailableError';
  }
}

/** The token is valid but lacks scopes the operation needs (a 403). */
export class InsufficientScopeError extends Error {
  constructor(public readonly missing: string[]) {
    super(`Token lacks the required scope${missing.length === 1 ? '' : 's'}: ${missing.join(' ')}.`);
    this.name = 'InsufficientScopeError';
  }
}

/** Caller-supplied text echoed in a message, cut short so a crafted token cannot bloat responses or logs. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
