import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { UnauthorizedError } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { BearerResolvers, type BearerTokenResolver } from '../auth/bearer-resolvers.js';
import { hashToken, newOpaqueSecret } from '../crypto/secrets.js';
import { TtlCache } from '../cache/ttl-cache.js';
import { CollectConfig } from '../config/collect-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { UsersService } from '../users/users.service.js';
import { GRANT_TYPE_AUTHORIZATION_CODE, OAuthApplicationsService } from './oauth-applications.service.js';
import type { OAuthApplicationEntity } from './oauth2.entities.js';
import { OAuthError } from './oauth2.errors.js';
import { OAuth2Repository, type IssuedTokens } from './oauth2.repository.js';
import type { AuthorizeParams, TokenRequestDto, TokenResponse } from './oauth2.dto.js';

export const SCOPES = ['read', 'write', 'groups'] as const;
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface AuthorizeRequest {
  app: OAuthApplicationEntity;
  redirectUri: string;
  redirectUriGiven: boolean;
  scopes: string[];
  state: string | undefined;
  codeChallenge: string | null;
}

/** What GET/POST /o/authorize makes of its parameters (RFC 6749 §4.1.2.1). */
export type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizeRequest }
  /** No trustworthy redirect_uri: the error is shown to the user, never redirected. */
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; location: string };

interface CachedAccess {
  user: AuthenticatedUser;
  isActive: boolean;
  expiresAt: number;
  revoked: boolean;
}

/**
 * The local OAuth 2.0 provider: authorization requests, codes (single use, 60 s), access
 * tokens (36000 s) and rotating refresh tokens, all stored hashed. It is also the first
 * Bearer token source of the AuthGuard.
 */
@Injectable()
export class OAuth2Service implements BearerTokenResolver, OnModuleInit {
  readonly name = 'local-oauth2';
  private readonly logger = new Logger('OAuth2');
  private readonly cache: TtlCache<CachedAccess | null>;

  constructor(
    private readonly repo: OAuth2Repository,
    private readonly applications: OAuthApplicationsService,
    private readonly users: UsersService,
    private readonly bearerResolvers: BearerResolvers,
    private readonly config: CollectConfig,
    changes: ChangeNotifications,
  ) {
    this.cache = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    // A deactivated (or otherwise changed) user's access tokens are resolved afresh in every process at once.
    changes.on('user', (id) => this.cache.deleteWhere((entry) => entry !== null && String(entry.user.id) === id));
  }

  onModuleInit(): void {
    this.bearerResolvers.register(this);
  }

  async checkAuthorizeRequest(params: AuthorizeParams): Promise<AuthorizeCheck> {
    const p = (name: keyof AuthorizeParams): string | undefined => params[name];
    const clientId = p('client_id');
    if (!clientId) return { kind: 'page', message: 'Missing client_id parameter.' };
    const app = await this.applications.findByClientId(clientId);
    if (!app) return { kind: 'page', message: 'Invalid client_id parameter value.' };
    const registered = app.redirectUris.split(/\s+/).filter(Boolean);
    const given = p('redirect_uri');
    let redirectUri: string;
    if (given !== undefined) {
      if (!registered.includes(given)) return { kind: 'page', message: 'Mismatching redirect URI.' };
      redirectUri = given;
    } else if (registered.length === 1) {
      redirectUri = registered[0]!;
    } else {
      return { kind: 'page', message: 'Missing redirect_uri parameter (the application registers several).' };
    }
    const state = p('state');
    const fail = (error: OAuthError['error'], description: string): AuthorizeCheck => ({
      kind: 'redirect',
      location: redirectWithParams(redirectUri, { error, error_description: description, state }),
    });

    const responseType = p('response_type');
    if (!responseType) return fail('invalid_request', 'Missing response_type parameter.');
    if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
    if (app.authorizationGrantType !== GRANT_TYPE_AUTHORIZATION_CODE) return fail('unauthorized_client', 'The client may not use the authorization code grant.');
    const requested = (p('scope') ?? SCOPES.join(' ')).split(/\s+/).filter(Boolean);
    const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) return fail('invalid_scope', `Unknown scope: ${unknown.join(' ').slice(0, 100)}.`);
    const scopes = SCOPES.filter((s) => requested.includes(s));
    if (scopes.length === 0) return fail('invalid_scope', 'No scope requested.');

    const challenge = p('code_challenge');
    const method = p('code_challenge_method');
    if (challenge !== undefined) {
      if ((method ?? 'plain') !== 'S256') return fail('invalid_request', 'Only code_challenge_method=S256 is supported.');
      if (!PKCE_CHALLENGE.test(challenge)) return fail('invalid_request', 'Invalid code_challenge.');
    } else if (method !== undefined) {
      return fail('invalid_request', 'code_challenge_method without code_challenge.');
    } else if (app.clientType === 'public') {
      return fail('invalid_request', 'Public clients must use PKCE (code_challenge, S256).');
    }
    return { kind: 'ok', request: { app, redirectUri, redirectUriGiven: given !== undefined, scopes: [...scopes], state, codeChallenge: challenge ?? null } };
  }

  /** The user allowed the request: a fresh code, and where to send the browser. */
  async approve(request: AuthorizeRequest, userId: number): Promise<string> {
    const code = newOpaqueSecret();
    await this.repo.insertGrant({
      codeHash: hashToken(code),
      applicationId: request.app.id,
      userId,
      redirectUri: request.redirectUri,
      redirectUriGiven: request.redirectUriGiven,
      scope: request.scopes.join(' '),
      codeChallenge: request.codeChallenge,
      expiresAt: new Date(Date.now() + this.config.OAUTH2_AUTHORIZATION_CODE_EXPIRE_SECONDS * 1000),
    });
    this.logger.log({ applicationId: request.app.id, userId }, 'authorization code issued');
    // Parameter order of the spec: `<redirect_uri>/?state=<state>&code=<code>`.
    return redirectWithParams(request.redirectUri, { state: request.state, code });
  }

  deny(request: AuthorizeRequest): string {
    return redirectWithParams(request.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: request.state });
  }

  /** POST /o/token: dispatch on grant_type. */
  async token(client: OAuthApplicationEntity, body: TokenRequestDto): Promise<TokenResponse> {
    const grantType = body.grant_type;
    if (!grantType) throw new OAuthError('invalid_request', 'Missing grant_type parameter.');
    if (grantType === 'authorization_code') return this.exchangeCode(client, body);
    if (grantType === 'refresh_token') return this.refresh(client, body);
    throw new OAuthError('unsupported_grant_type', `Unsupported grant_type: ${grantType.slice(0, 50)}.`);
  }

  private async exchangeCode(client: OAuthApplicationEntity, body: TokenRequestDto): Promise<TokenResponse> {
    const code = body.code;
    if (!code) throw new OAuthError('invalid_request', 'Missing code parameter.');
    const grant = await this.repo.findGrantByCodeHash(hashToken(code));
    if (!grant || grant.applicationId !== client.id) throw new OAuthError('invalid_grant', 'Invalid authorization code.');
    if (grant.usedAt) return this.codeReused(client, grant.id, await this.repo.revokeGrantFamily(grant.id));
    if (grant.expiresAt.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'Authorization code expired.');
    const redirectUri = body.redirect_uri;
    if (grant.redirectUriGiven ? redirectUri !== grant.redirectUri : redirectUri !== undefined && redirectUri !== grant.redirectUri) {
      throw new OAuthError('invalid_grant', 'Mismatching redirect URI.');
    }
    if (grant.codeChallenge) {
      const verifier = body.code_verifier;
      if (verifier === undefined || !PKCE_VERIFIER.test(verifier)) throw new OAuthError('invalid_grant', 'Missing or invalid code_verifier.');
      if (createHash('sha256').update(verifier).digest('base64url') !== grant.codeChallenge) throw new OAuthError('invalid_grant', 'Code verifier does not match the challenge.');
    } else if (body.code_verifier !== undefined) {
      throw new OAuthError('invalid_grant', 'code_verifier given but the authorization request had no code_challenge.');
    }
    await this.requireActiveUser(grant.userId);
    const pair = this.newPair(client, grant.userId, grant.scope);
    const done = await this.repo.redeemCode(grant.id, pair.issued);
    if (done.kind === 'reused') return this.codeReused(client, grant.id, done.revokedHashes);
    return this.issued(client, grant.userId, grant.id, pair.response);
  }

  /** RFC 6749 §4.1.2: a code used twice may be stolen; what its first use issued is revoked (docs/security.md). */
  private codeReused(client: OAuthApplicationEntity, grantId: number, revokedHashes: string[]): never {
    for (const h of revokedHashes) this.cache.delete(h);
    this.logger.warn({ applicationId: client.id, grantId }, 'authorization code reused; tokens revoked');
    throw new OAuthError('invalid_grant', 'Authorization code already used.');
  }

  private async refresh(client: OAuthApplicationEntity, body: TokenRequestDto): Promise<TokenResponse> {
    const token = body.refresh_token;
    if (!token) throw new OAuthError('invalid_request', 'Missing refresh_token parameter.');
    const row = await this.repo.findTokenByHash('refresh', hashToken(token));
    if (!row || row.applicationId !== client.id) throw new OAuthError('invalid_grant', 'Invalid refresh token.');
    if (row.revokedAt) return this.refreshReused(client, row.grantId, await this.repo.revokeGrantFamily(row.grantId));
    // A request the server refuses (a wider scope, an inactive user) leaves the refresh token usable.
    let scope = row.scope;
    if (body.scope?.trim()) {
      const asked = body.scope.split(/\s+/).filter(Boolean);
      const granted = row.scope.split(' ');
      if (asked.some((s) => !granted.includes(s))) throw new OAuthError('invalid_scope', 'The requested scope exceeds the original grant.');
      scope = SCOPES.filter((s) => asked.includes(s)).join(' ');
    }
    await this.requireActiveUser(row.userId);
    const pair = this.newPair(client, row.userId, scope);
    const done = await this.repo.rotateRefreshToken(row, pair.issued);
    if (done.kind === 'reused') return this.refreshReused(client, row.grantId, done.revokedHashes);
    for (const h of done.revokedHashes) this.cache.delete(h);
    return this.issued(client, row.userId, row.grantId, pair.response);
  }

  /** A rotated refresh token presented again: someone holds a copy. The whole family ends. */
  private refreshReused(client: OAuthApplicationEntity, grantId: number, revokedHashes: string[]): never {
    for (const h of revokedHashes) this.cache.delete(h);
    this.logger.warn({ applicationId: client.id, grantId }, 'refresh token reused; token family revoked');
    throw new OAuthError('invalid_grant', 'Invalid refresh token.');
  }

  private async requireActiveUser(userId: number): Promise<void> {
    const user = await this.users.findById(userId);
    if (!user?.isActive) throw new OAuthError('invalid_grant', 'The user is inactive or deleted.');
  }

  /** New secrets; only their hashes are stored. */
  private newPair(client: OAuthApplicationEntity, userId: number, scope: string): { issued: IssuedTokens; response: TokenResponse } {
    const accessToken = newOpaqueSecret();
    const refreshToken = newOpaqueSecret();
    const lifetime = this.config.OAUTH2_ACCESS_TOKEN_EXPIRE_SECONDS;
    return {
      issued: {
        applicationId: client.id,
        userId,
        scope,
        accessHash: hashToken(accessToken),
        refreshHash: hashToken(refreshToken),
        accessExpiresAt: new Date(Date.now() + lifetime * 1000),
      },
      response: { access_token: accessToken, token_type: 'Bearer', expires_in: lifetime, refresh_token: refreshToken, scope },
    };
  }

  private issued(client: OAuthApplicationEntity, userId: number, grantId: number, response: TokenResponse): TokenResponse {
    this.logger.log({ applicationId: client.id, userId, grantId }, 'oauth tokens issued');
    return response;
  }

  /** BearerTokenResolver: local access tokens are 43 base64url characters, never a JWT. */
  async resolve(token: string): Promise<AuthenticatedUser | null> {
    if (token.includes('.') || token.length !== 43) return null;
    const hash = hashToken(token);
    let entry = this.cache.get(hash);
    if (entry === undefined) {
      const row = await this.repo.findAccessTokenOwner(hash);
      entry = row
        ? {
            user: { id: row.user_id, username: row.username, isSuperuser: row.is_superuser, scheme: 'bearer', scopes: row.scope.split(' ').filter(Boolean) },
            isActive: row.is_active,
            expiresAt: new Date(row.expires_at).getTime(),
            revoked: row.revoked_at !== null,
          }
        : null;
      this.cache.set(hash, entry);
    }
    if (!entry) return null;
    if (entry.revoked) throw new UnauthorizedError('Invalid token.', 'Bearer');
    if (entry.expiresAt <= Date.now()) throw new UnauthorizedError('Token expired', 'Bearer');
    if (!entry.isActive) throw new UnauthorizedError('User inactive or deleted.', 'Bearer');
    return { ...entry.user, scopes: [...entry.user.scopes!] };
  }
}

/** Adds query parameters to a redirect URI, keeping its own query; undefined values are left out. */
export function redirectWithParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value);
  return url.toString();
}
