import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpErrorWithHeaders, UnauthorizedError } from '@collect/contracts';
import { JwtValidationError, JwtValidator, KeySourceUnavailableError, type AccessTokenClaims } from '@collect/jwt-validation';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { BearerResolvers, type BearerTokenResolver } from '../auth/bearer-resolvers.js';
import { TtlCache } from '../cache/ttl-cache.js';
import { CollectConfig } from '../config/collect-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { UsersService } from '../users/users.service.js';
import { isCasIssuedJwt, isClientCredentialsToken } from './cas-token.js';

/**
 * Bearer tokens issued by the CAS (spec §5.3): RS256 JWTs checked by libs/jwt-validation
 * against CAS_ISSUER's discovery/JWKS and CAS_AUDIENCE. A user token acts as the local user
 * on-boarded for its `sub`; a client-credentials token as the service account of its
 * `client_id`. Scopes go on the caller, so the AuthGuard's read/write rule applies as for
 * local tokens. A verified token (by its sha256) and the local user of a subject/client are
 * cached for AUTH_TOKEN_CACHE_TTL_MS like the other schemes' lookups (an RSA verification and a
 * query per request cost two thirds of the throughput); a verified token never past its `exp`.
 * A change of a user row (on-boarding, off-boarding, deactivation) drops the links in every
 * process at commit (ChangeNotifications); docs/security.md, "Caches", has the bounds.
 */
@Injectable()
export class CasTokenResolver implements BearerTokenResolver, OnModuleInit {
  readonly name = 'cas';
  private readonly logger = new Logger('CasTokenResolver');
  private readonly validator: JwtValidator;
  private readonly links: TtlCache<{ id: number; username: string; isSuperuser: boolean; isActive: boolean } | null>;
  /** sha256 of a token → its verified claims, for AUTH_TOKEN_CACHE_TTL_MS at most and never past `exp`. */
  private readonly verifiedTokens: TtlCache<{ claims: AccessTokenClaims; scopes: string[]; expiresAt: number }>;

  constructor(
    private readonly config: CollectConfig,
    private readonly resolvers: BearerResolvers,
    private readonly users: UsersService,
    changes: ChangeNotifications,
  ) {
    this.links = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    this.verifiedTokens = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    // A user row changed anywhere (deactivated, linked, unlinked): its links are looked up again,
    // and so are subjects and clients that had none.
    changes.on('user', (id) => this.links.deleteWhere((link) => link === null || String(link.id) === id));
    this.validator = new JwtValidator({
      issuer: config.CAS_ISSUER,
      audience: config.CAS_AUDIENCE,
      // RFC 9068: an ID token of the same issuer is not an access token (as cas-api requires).
      typ: 'at+jwt',
      logger: { warn: (m) => this.logger.warn(m), debug: (m) => this.logger.debug(m) },
    });
  }

  onModuleInit(): void {
    this.resolvers.register(this);
  }

  async resolve(token: string): Promise<AuthenticatedUser | null> {
    // A token verified a moment ago is not verified again (docs/security.md, "Caches").
    const tokenKey = token.length > 64 ? createHash('sha256').update(token).digest('base64url') : undefined;
    const known = tokenKey ? this.verifiedTokens.get(tokenKey) : undefined;
    if (known && known.expiresAt > Date.now()) return this.userOf(known.claims, known.scopes);
    if (!isCasIssuedJwt(token, this.config.CAS_ISSUER)) return null;
    let verified;
    try {
      verified = await this.validator.verify(token);
    } catch (err) {
      if (err instanceof JwtValidationError) {
        this.logger.debug({ event: 'cas_token.refused', code: err.code });
        throw new UnauthorizedError(err.message, `Bearer realm="api", error="invalid_token"`);
      }
      if (err instanceof KeySourceUnavailableError) {
        throw new HttpErrorWithHeaders(503, 'The central authentication service cannot be reached to check this token; try again shortly.', { 'Retry-After': '5' });
      }
      throw err;
    }
    const { claims, scopes } = verified;
    // Never past the token's own expiry; the link and the user are looked up on every hit.
    if (tokenKey && typeof claims.exp === 'number') this.verifiedTokens.set(tokenKey, { claims, scopes, expiresAt: claims.exp * 1000 });
    return this.userOf(claims, scopes);
  }

  private async userOf(claims: AccessTokenClaims, scopes: string[]): Promise<AuthenticatedUser> {
    const machine = isClientCredentialsToken(claims);
    const key = machine ? `client:${claims.client_id}` : `sub:${claims.sub}`;
    let user = this.links.get(key);
    if (user === undefined) {
      const found = machine ? await this.users.findByCasClientId(claims.client_id!) : await this.users.findByCasSubject(claims.sub!);
      user = found ? { id: found.id, username: found.username, isSuperuser: found.isSuperuser, isActive: found.isActive } : null;
      this.links.set(key, user);
    }
    if (!user || !user.isActive) {
      throw new HttpErrorWithHeaders(
        403,
        machine
          ? `The CAS client '${claims.client_id}' is not linked to a service account of this service; ask a platform administrator to add it.`
          : 'Your central account is not on-boarded to this service; ask a platform administrator to give you access.',
        {},
      );
    }
    return { id: user.id, username: user.username, isSuperuser: user.isSuperuser, scheme: 'bearer', scopes: [...scopes] };
  }

  /** After an on-boarding change: the next token of this subject or client is looked up again. */
  forget(link: { casSubject?: string; casClientId?: string }): void {
    if (link.casSubject) this.links.delete(`sub:${link.casSubject}`);
    if (link.casClientId) this.links.delete(`client:${link.casClientId}`);
  }
}
