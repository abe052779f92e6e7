/** Signature algorithms the validator can check. Spec §5.3 allows only RS256 (the default). */
export type SupportedAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512';

export const SUPPORTED_ALGORITHMS: readonly SupportedAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];

export interface JwtValidatorLogger {
  warn(message: string): void;
  debug?(message: string): void;
}

export interface JwtValidatorOptions {
  /** Expected `iss`, exactly (spec §5.3). Discovery is read at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** The resource name this service is known by in the CAS; `aud` must equal or contain it. */
  audience: string;
  /** Allow-list of `alg` values. Default `['RS256']`; `none` and HMAC algorithms are never accepted. */
  algorithms?: SupportedAlgorithm[];
  /** Leeway for `exp`, `nbf` and `iat`, in seconds. Default 30. */
  clockToleranceSeconds?: number;
  /** Claims that must be present besides `iss`, `aud`, `exp` (always required). Default `['iat', 'sub']`. */
  requiredClaims?: string[];
  /** When set, the `typ` header must equal it (e.g. `at+jwt`, RFC 9068), case-insensitively. */
  typ?: string;
  /** Longest token accepted, in characters. Default 8192. */
  maxTokenLength?: number;
  /** Discovery document address, when the service reaches the CAS by another address than the issuer (in-cluster). */
  discoveryUrl?: string;
  /** JWKS address; skips discovery altogether. */
  jwksUri?: string;
  /** Keys older than this are refreshed in the background (still used meanwhile). Default 10 min. */
  jwksMaxAgeMs?: number;
  /** Least time between two key-set fetches caused by an unknown `kid`. Default 30 s. */
  jwksCooldownMs?: number;
  /** With no keys cached at all, least time between two fetch attempts. Default 1 s. */
  unavailableRetryMs?: number;
  /** Discovery document lifetime. Default 1 h. */
  discoveryMaxAgeMs?: number;
  /** Timeout of each discovery / JWKS request. Default 5 s. */
  httpTimeoutMs?: number;
  /** Clock in milliseconds since the epoch; tests pass their own to step over cooldowns. */
  now?: () => number;
  logger?: JwtValidatorLogger;
}

export type ResolvedOptions = Required<Omit<JwtValidatorOptions, 'typ' | 'discoveryUrl' | 'jwksUri' | 'logger'>> &
  Pick<JwtValidatorOptions, 'typ' | 'discoveryUrl' | 'jwksUri' | 'logger'>;

export function resolveOptions(options: JwtValidatorOptions): ResolvedOptions {
  if (!options.issuer) throw new Error('jwt-validation: issuer is required');
  if (!options.audience) throw new Error('jwt-validation: audience is required');
  const algorithms = options.algorithms ?? ['RS256'];
  if (algorithms.length === 0) throw new Error('jwt-validation: algorithms must not be empty');
  for (const alg of algorithms) {
    // Guards against a config typo turning into "accept HS256" or "accept none".
    if (!SUPPORTED_ALGORITHMS.includes(alg)) throw new Error(`jwt-validation: unsupported algorithm ${alg}`);
  }
  return {
    issuer: options.issuer,
    audience: options.audience,
    algorithms,
    clockToleranceSeconds: options.clockToleranceSeconds ?? 30,
    requiredClaims: options.requiredClaims ?? ['iat', 'sub'],
    typ: options.typ,
    maxTokenLength: options.maxTokenLength ?? 8192,
    discoveryUrl: options.discoveryUrl,
    jwksUri: options.jwksUri,
    jwksMaxAgeMs: options.jwksMaxAgeMs ?? 10 * 60_000,
    jwksCooldownMs: options.jwksCooldownMs ?? 30_000,
    unavailableRetryMs: options.unavailableRetryMs ?? 1_000,
    discoveryMaxAgeMs: options.discoveryMaxAgeMs ?? 60 * 60_000,
    httpTimeoutMs: options.httpTimeoutMs ?? 5_000,
    now: options.now ?? Date.now,
    logger: options.logger,
  };
}
