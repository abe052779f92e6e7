import { constants, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { JwtValidationError, quote } from './errors.js';
import { DiscoveryKeySource, type KeySourceStats } from './key-source.js';
import { resolveOptions, type JwtValidatorOptions, type ResolvedOptions, type SupportedAlgorithm } from './options.js';
import { scopesOf } from './scopes.js';

export interface AccessTokenClaims {
  iss: string;
  aud: string | string[];
  exp: number;
  sub?: string;
  iat?: number;
  nbf?: number;
  jti?: string;
  scope?: string;
  client_id?: string;
  [claim: string]: unknown;
}

/** A token that passed every rule. */
export interface VerifiedAccessToken {
  claims: AccessTokenClaims;
  header: { alg: SupportedAlgorithm; kid: string; typ?: string };
  /** `scope` split on spaces. */
  scopes: string[];
  subject?: string;
  clientId?: string;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const NUMERIC_CLAIMS = ['exp', 'nbf', 'iat'] as const;
const STRING_CLAIMS = ['sub', 'scope', 'client_id', 'jti'] as const;

const HASH: Record<SupportedAlgorithm, string> = {
  RS256: 'sha256', RS384: 'sha384', RS512: 'sha512',
  PS256: 'sha256', PS384: 'sha384', PS512: 'sha512',
};

/**
 * Accepts CAS access tokens (spec §5.3): RS256 JWTs whose key is published in the JWKS found
 * through discovery. The checks run cheapest first and the signature before any claim is
 * trusted.
 *
 * Keys are imported with jose; the signature itself is checked with node:crypto's synchronous
 * `verify` on the imported KeyObject, because jose 6 verifies through WebCrypto, which costs
 * about 4x more per token on Node 20 (docs/jwt-validation.md has the numbers).
 */
export class JwtValidator {
  readonly options: ResolvedOptions;
  private readonly keySource: DiscoveryKeySource;
  private readonly requiredClaims: readonly string[];

  constructor(options: JwtValidatorOptions) {
    this.options = resolveOptions(options);
    this.keySource = new DiscoveryKeySource(this.options);
    this.requiredClaims = [...new Set(['iss', 'aud', 'exp', ...this.options.requiredClaims])];
  }

  /** Throws JwtValidationError (token refused) or KeySourceUnavailableError (cannot tell). */
  async verify(token: string): Promise<VerifiedAccessToken> {
    const o = this.options;
    if (typeof token !== 'string' || token.length === 0) throw new JwtValidationError('token_malformed', 'Token is empty.');
    if (token.length > o.maxTokenLength) throw new JwtValidationError('token_too_large', `Token is longer than ${o.maxTokenLength} characters.`);
    // Two indexOf calls instead of split('.'): no array and no third string per token.
    const dot1 = token.indexOf('.');
    const dot2 = dot1 === -1 ? -1 : token.indexOf('.', dot1 + 1);
    // The payload's characters are not scanned here: the signature covers its exact bytes, so a
    // payload the issuer did not write fails as signature_invalid before it is decoded.
    if (dot2 === -1 || dot2 === dot1 + 1 || token.indexOf('.', dot2 + 1) !== -1) {
      throw new JwtValidationError('token_malformed', 'Token is not a signed JWT (compact JWS with three base64url parts).');
    }
    const header = this.decodeHeader(token.slice(0, dot1));
    const alg = header.alg;
    if (typeof alg !== 'string' || !(o.algorithms as string[]).includes(alg)) {
      throw new JwtValidationError('alg_not_allowed', `Token algorithm ${quote(alg ?? 'missing')} is not allowed; expected ${o.algorithms.join(' or ')}.`);
    }
    if (header.crit !== undefined) throw new JwtValidationError('crit_unsupported', 'Token has critical header parameters this service does not understand.');
    if (o.typ !== undefined && !sameTyp(header.typ, o.typ)) {
      throw new JwtValidationError('typ_not_allowed', `Token type ${quote(header.typ ?? 'missing')} is not allowed; expected ${quote(o.typ)}.`);
    }
    const kid = header.kid;
    if (typeof kid !== 'string' || kid.length === 0) throw new JwtValidationError('kid_missing', 'Token header has no "kid".');
    const signature = decodeSignature(token.slice(dot2 + 1));
    if (!signature) throw new JwtValidationError('signature_invalid', 'Token signature is invalid.');

    const published = this.keySource.peek(kid) ?? (await this.keySource.getKey(kid));
    if (!published) throw new JwtValidationError('kid_unknown', `Token key id ${quote(kid)} is not published by the issuer.`);
    if (published.alg !== undefined && published.alg !== alg) {
      throw new JwtValidationError('alg_not_allowed', `Token algorithm ${quote(alg)} does not match its key (${published.alg}).`);
    }
    if (!verifySignature(alg as SupportedAlgorithm, published.key, token, dot2, signature)) {
      throw new JwtValidationError('signature_invalid', 'Token signature is invalid.');
    }

    const claims = decodeJson(token.slice(dot1 + 1, dot2), 'payload');
    this.checkClaims(claims);
    const scopes = scopesOf(claims.scope);
    return {
      claims: claims as AccessTokenClaims,
      header: { alg: alg as SupportedAlgorithm, kid, typ: typeof header.typ === 'string' ? header.typ : undefined },
      scopes,
      subject: typeof claims.sub === 'string' ? claims.sub : undefined,
      clientId: typeof claims.client_id === 'string' ? claims.client_id : undefined,
    };
  }

  /**
   * Every token from one key shares one header, so its parse is cached (bounded; the entries
   * are plain parsed JSON and say nothing about validity).
   */
  private readonly headerCache = new Map<string, Record<string, unknown>>();

  private decodeHeader(segment: string): Record<string, unknown> {
    const cached = this.headerCache.get(segment);
    if (cached) return cached;
    if (!SEGMENT.test(segment)) throw new JwtValidationError('token_malformed', 'Token is not a signed JWT (compact JWS with three base64url parts).');
    const header = decodeJson(segment, 'header');
    if (segment.length <= 512) {
      if (this.headerCache.size >= 64) this.headerCache.clear();
      this.headerCache.set(segment, Object.freeze(header));
    }
    return header;
  }

  private checkClaims(claims: Record<string, unknown>): void {
    const o = this.options;
    for (const name of this.requiredClaims) {
      if (claims[name] === undefined || claims[name] === null) throw new JwtValidationError('claim_missing', `Token has no ${quote(name)} claim.`);
    }
    for (const name of NUMERIC_CLAIMS) {
      const value = claims[name];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
        throw new JwtValidationError('claim_invalid', `Token claim ${quote(name)} must be a number (seconds since the epoch).`);
      }
    }
    for (const name of STRING_CLAIMS) {
      if (claims[name] !== undefined && typeof claims[name] !== 'string') throw new JwtValidationError('claim_invalid', `Token claim ${quote(name)} must be a string.`);
    }
    if (claims.iss !== o.issuer) throw new JwtValidationError('issuer_mismatch', `Token issuer ${quote(claims.iss)} is not accepted.`);
    const aud = claims.aud;
    const audiences = Array.isArray(aud) ? aud : [aud];
    if (!audiences.includes(o.audience)) throw new JwtValidationError('audience_mismatch', `Token audience does not include ${quote(o.audience)}.`);

    const now = o.now() / 1000;
    const skew = o.clockToleranceSeconds;
    if ((claims.exp as number) <= now - skew) throw new JwtValidationError('token_expired', 'Token has expired.');
    if (claims.nbf !== undefined && (claims.nbf as number) > now + skew) throw new JwtValidationError('token_not_yet_valid', 'Token is not valid yet (nbf).');
    if (claims.iat !== undefined && (claims.iat as number) > now + skew) throw new JwtValidationError('token_issued_in_future', 'Token was issued in the future (iat).');
  }

  /** Resolves when no key fetch is running; lets tests and shutdown wait for a background refresh. */
  settled(): Promise<void> {
    return this.keySource.settled();
  }

  getStats(): KeySourceStats {
    return this.keySource.getStats();
  }
}

function decodeJson(segment: string, what: 'header' | 'payload'): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new JwtValidationError('token_malformed', `Token ${what} is not base64url-encoded JSON.`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new JwtValidationError('token_malformed', `Token ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

/**
 * The signature segment's bytes, or undefined unless the segment is exactly the unpadded
 * base64url encoding of them (RFC 7515 §2, §7.1). Node's decoder is lenient (it skips unknown
 * characters and takes `+` `/` `=` too), so the bytes are encoded again and compared: one native
 * encode of ~256 bytes is cheaper than a regular expression over ~342 characters, and it also
 * refuses the non-canonical last character the expression let through.
 */
function decodeSignature(segment: string): Buffer | undefined {
  if (segment.length === 0) return undefined;
  const sig = Buffer.from(segment, 'base64url');
  return sig.toString('base64url') === segment ? sig : undefined;
}

/** Verifies `signature` over the token's first `signedLength` characters (header.payload). */
function verifySignature(alg: SupportedAlgorithm, key: KeyObject, token: string, signedLength: number, signature: Buffer): boolean {
  // UTF-8, not latin1: latin1 keeps only the low byte of each character, so a payload character
  // U+0141 would sign as "A" (0x41), and Node's base64url decoder reads it as "A" too: a
  // different token string with the issuer's signature. In UTF-8 any non-ASCII character
  // changes the bytes and the signature fails (validator.spec.ts tests both).
  const data = Buffer.from(token.slice(0, signedLength), 'utf8');
  try {
    if (alg.startsWith('PS')) {
      return cryptoVerify(HASH[alg], data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 }, signature);
    }
    return cryptoVerify(HASH[alg], data, key, signature);
  } catch {
    return false;
  }
}

/** RFC 9068 §4: `at+jwt` and `application/at+jwt` are the same type. */
function sameTyp(actual: unknown, expected: string): boolean {
  if (typeof actual !== 'string') return false;
  const norm = (t: string) => t.toLowerCase().replace(/^application\//, '');
  return norm(actual) === norm(expected);
}

