import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type * as oidcTypes from 'openid-client';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';
import { hashToken, SecretBox } from '../crypto/secrets.js';
import { CollectConfig } from '../config/collect-config.js';
import { UsersService } from '../users/users.service.js';
import type { UserEntity } from '../users/user.entity.js';
import { allowHttpIssuer, CasClientDiscovery, loadOidc } from './cas-oidc.js';
import { CasSessionsRepository } from './cas-sessions.repository.js';
import { cookieHeader, readCookie } from '../auth/cookies.js';
import type { SignInCallbackQueryDto } from './cas-sign-in.dto.js';

/** What the callback ends in: a redirect (signed in) or a page explaining the refusal. */
export type CallbackOutcome = { kind: 'signed-in'; location: string } | { kind: 'refused'; status: number; message: string };

interface StoredTokens {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  expires_at?: number;
}

const SCOPE = 'openid profile email read write';

/**
 * collect-api as the backend-for-frontend of the CAS sign-in (spec §5.3): authorization code +
 * PKCE as the confidential client collect-web, tokens kept server-side (encrypted in
 * `cas_sessions`), the browser holding only a random session id in an HttpOnly cookie.
 *
 * A pending sign-in is stored under the hash of its `state` together with the hash of a random
 * value put in an HttpOnly cookie of the same browser: the callback takes the entry (single
 * use) and refuses it when the cookie does not match, so a `state` copied to another browser
 * (or a callback URL replayed) cannot complete a sign-in.
 */
@Injectable()
export class CasSignInService {
  private readonly logger = new Logger('CasSignIn');
  private readonly discovery: CasClientDiscovery;
  private readonly box: SecretBox;
  readonly loginCookie: string;

  constructor(
    private readonly config: CollectConfig,
    private readonly repo: CasSessionsRepository,
    private readonly users: UsersService,
  ) {
    this.discovery = new CasClientDiscovery(config.CAS_ISSUER, config.CAS_CLIENT_ID, config.CAS_CLIENT_SECRET ?? '', allowHttpIssuer(config.NODE_ENV, config.CAS_ISSUER));
    this.box = new SecretBox(config.COLLECT_SECRET_KEY);
    this.loginCookie = `${config.CAS_SESSION_COOKIE_NAME}_login`;
  }

  get enabled(): boolean {
    return this.config.CAS_SIGN_IN_ENABLED && !!this.config.CAS_CLIENT_SECRET;
  }

  get callbackUrl(): string {
    return `${this.config.PUBLIC_BASE_URL}/auth/callback`;
  }

  /** The CAS authorization URL for a new sign-in; sets the browser-binding cookie. */
  async start(returnTo: string, res: HttpResponse): Promise<string> {
    const config = await this.discovery.get();
    const oidc = await loadOidc();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    const browser = randomBytes(32).toString('base64url');
    const lifetime = this.config.CAS_LOGIN_STATE_SECONDS;
    await this.repo.insertPendingLogin(hashToken(state), {
      browser_hash: hashToken(browser),
      code_verifier: verifier,
      nonce,
      return_to: returnTo,
      expires_at: new Date(Date.now() + lifetime * 1000),
    });
    res.append('Set-Cookie', cookieHeader(this.loginCookie, browser, { path: '/auth/callback', maxAge: lifetime, secure: this.config.CAS_SESSION_COOKIE_SECURE }));
    return oidc
      .buildAuthorizationUrl(config, {
        redirect_uri: this.callbackUrl,
        scope: SCOPE,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
      .toString();
  }

  async callback(query: SignInCallbackQueryDto, req: HttpRequest, res: HttpResponse): Promise<CallbackOutcome> {
    const state = query.state ?? '';
    // The binding cookie has done its job whatever happens next.
    res.append('Set-Cookie', cookieHeader(this.loginCookie, '', { path: '/auth/callback', maxAge: 0, secure: this.config.CAS_SESSION_COOKIE_SECURE }));
    if (!state) return refused(400, 'The sign-in answer has no state. Start the sign-in again.');
    const pending = await this.repo.takePendingLogin(hashToken(state));
    if (!pending) return refused(400, 'This sign-in was already completed, has expired, or was not started here. Start the sign-in again.');
    const browser = readCookie(req, this.loginCookie);
    if (!browser || hashToken(browser) !== pending.browser_hash) {
      this.logger.warn({ event: 'cas_sign_in.browser_mismatch' });
      return refused(400, 'This sign-in was started in another browser. Start the sign-in again.');
    }
    if (new Date(pending.expires_at).getTime() <= Date.now()) return refused(400, 'The sign-in took too long. Start the sign-in again.');
    if (query.error !== undefined) {
      return refused(400, `The central service did not sign you in (${query.error.slice(0, 100)}).`);
    }
    let tokens: Awaited<ReturnType<typeof oidcTypes.authorizationCodeGrant>>;
    const oidc = await loadOidc();
    try {
      // openid-client sends this URL without its query as redirect_uri: it must be the registered one.
      const current = new URL(`${this.callbackUrl}${new URL(req.url, 'http://x').search}`);
      tokens = await oidc.authorizationCodeGrant(await this.discovery.get(), current, {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      this.logger.warn({ event: 'cas_sign_in.exchange_failed', error: err instanceof Error ? err.message : String(err) });
      return refused(400, 'The sign-in could not be completed with the central service. Start the sign-in again.');
    }
    const claims = tokens.claims()!;
    const user = await this.localUser(claims);
    if (!user) return refused(403, 'Your central account is not on-boarded to this service. Ask a platform administrator to give you access.');
    if (!user.isActive) return refused(403, 'Your access to this service has been removed. Ask a platform administrator.');
    const sessionId = randomBytes(32).toString('base64url');
    const stored: StoredTokens = {
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token,
      id_token: tokens.id_token,
      expires_at: tokens.expires_in ? Math.floor(Date.now() / 1000) + tokens.expires_in : undefined,
    };
    const lifetime = this.config.CAS_SESSION_SECONDS;
    await this.repo.insertSession(hashToken(sessionId), user.id, claims.sub, this.box.encrypt(JSON.stringify(stored)), new Date(Date.now() + lifetime * 1000));
    res.append('Set-Cookie', cookieHeader(this.config.CAS_SESSION_COOKIE_NAME, sessionId, { path: '/', maxAge: lifetime, secure: this.config.CAS_SESSION_COOKIE_SECURE }));
    this.logger.log({ event: 'cas_sign_in.success', userId: user.id });
    return { kind: 'signed-in', location: pending.return_to };
  }

  /** The signed-in local user of this browser's session, or null. */
  async sessionUser(req: HttpRequest): Promise<{ id: number; username: string } | null> {
    const id = readCookie(req, this.config.CAS_SESSION_COOKIE_NAME);
    if (!id || id.length > 100) return null;
    const row = await this.repo.findSession(hashToken(id));
    if (!row || !row.is_active || new Date(row.expires_at).getTime() <= Date.now()) return null;
    return { id: row.user_id, username: row.username };
  }

  /**
   * Ends the local session and answers where to send the browser: the CAS end-session endpoint
   * (RP-initiated logout, with id_token_hint) when there was a session, else the login page.
   */
  async logout(req: HttpRequest, res: HttpResponse): Promise<string> {
    res.append('Set-Cookie', cookieHeader(this.config.CAS_SESSION_COOKIE_NAME, '', { path: '/', maxAge: 0, secure: this.config.CAS_SESSION_COOKIE_SECURE }));
    const id = readCookie(req, this.config.CAS_SESSION_COOKIE_NAME);
    const row = id && id.length <= 100 ? await this.repo.deleteSession(hashToken(id)) : null;
    if (!row) return '/login';
    const plain = this.box.decrypt(row.tokens_enc);
    const tokens = plain ? (JSON.parse(plain) as StoredTokens) : null;
    try {
      const params: Record<string, string> = { post_logout_redirect_uri: `${this.config.PUBLIC_BASE_URL}/`, client_id: this.config.CAS_CLIENT_ID };
      if (tokens?.id_token) params.id_token_hint = tokens.id_token;
      return (await loadOidc()).buildEndSessionUrl(await this.discovery.get(), params).toString();
    } catch (err) {
      this.logger.warn({ event: 'cas_logout.no_end_session', error: err instanceof Error ? err.message : String(err) });
      return '/login';
    }
  }

  async endSessionsOf(userId: number): Promise<void> {
    await this.repo.deleteSessionsOfUser(userId);
  }

  private async localUser(claims: oidcTypes.IDToken): Promise<UserEntity | null> {
    const existing = await this.users.findByCasSubject(claims.sub);
    if (existing || !this.config.CAS_AUTO_ONBOARD) return existing;
    const username = typeof claims.preferred_username === 'string' ? claims.preferred_username : claims.sub;
    const created = await this.users.createLinked({
      username,
      email: typeof claims.email === 'string' ? claims.email : '',
      firstName: typeof claims.given_name === 'string' ? claims.given_name : '',
      lastName: typeof claims.family_name === 'string' ? claims.family_name : '',
      casSubject: claims.sub,
    });
    if (created) this.logger.log({ event: 'cas_user.auto_onboarded', userId: created.id });
    // A local account already holds the username: an admin on-boards this person explicitly.
    return created ?? (await this.users.findByCasSubject(claims.sub));
  }
}

function refused(status: number, message: string): CallbackOutcome {
  return { kind: 'refused', status, message };
}

/** A same-site path to come back to after sign-in; anything else becomes /login. */
export function safeReturnTo(value: string | undefined): string {
  if (typeof value !== 'string' || value.length > 4000) return '/login';
  return /^\/(?![/\\])/.test(value) && !/[\r\n]/.test(value) ? value : '/login';
}
