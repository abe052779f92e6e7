import { Injectable, Logger } from '@nestjs/common';
import { HttpErrorWithHeaders, type CasUser, type CasUserPage } from '@collect/contracts';
import { CollectConfig } from '../config/collect-config.js';
import { allowHttpIssuer, CasClientDiscovery, loadOidc } from '../cas-client/cas-oidc.js';

const SCOPE = 'adminui-api-wrapper adminui-api-wrapper.users.search';
/** A token is replaced this long before it expires, so a request never carries one that dies in flight. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * Client of the CAS user-search API (cas-api) with a client-credentials token of the
 * on-boarding client (`demo-onboarding` in development), cached until shortly before it
 * expires; concurrent callers share one token request.
 */
@Injectable()
export class CasApiClient {
  private readonly logger = new Logger('CasApiClient');
  private readonly discovery: CasClientDiscovery | null;
  private token: { value: string; refreshAt: number } | null = null;
  private inflight: Promise<string> | null = null;
  /** Token requests made, for tests and logs. */
  tokenRequests = 0;

  constructor(private readonly config: CollectConfig) {
    const { CAS_ONBOARDING_CLIENT_ID: id, CAS_ONBOARDING_CLIENT_SECRET: secret } = config;
    this.discovery = id && secret ? new CasClientDiscovery(config.CAS_ISSUER, id, secret, allowHttpIssuer(config.NODE_ENV, config.CAS_ISSUER)) : null;
  }

  searchUsers(params: { search?: string; page?: string; page_size?: string }): Promise<CasUserPage> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
    return this.get<CasUserPage>(`/api/users?${query.toString()}`);
  }

  /** Null when the CAS has no such user (or the id is not one of its UUIDs). */
  async getUser(id: string): Promise<CasUser | null> {
    try {
      return await this.get<CasUser>(`/api/users/${encodeURIComponent(id)}`);
    } catch (err) {
      if (err instanceof CasApiStatusError && err.status === 404) return null;
      throw err;
    }
  }

  private async get<T>(path: string, retried = false): Promise<T> {
    const token = await this.accessToken();
    let res: Response;
    try {
      res = await fetch(`${this.config.CAS_API_URL}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      this.logger.warn({ event: 'cas_api.unreachable', error: String(err) });
      throw unavailable();
    }
    // A token the CAS no longer accepts (key rotated away, client changed): fetch a new one once.
    if (res.status === 401 && !retried) {
      this.token = null;
      return this.get<T>(path, true);
    }
    if (res.status === 404) throw new CasApiStatusError(404);
    if (res.status === 400) {
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      throw new HttpErrorWithHeaders(400, `The central service refused the query: ${JSON.stringify(body).slice(0, 200)}`, {});
    }
    if (!res.ok) {
      this.logger.warn({ event: 'cas_api.error', status: res.status });
      throw unavailable();
    }
    return (await res.json()) as T;
  }

  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.refreshAt) return this.token.value;
    this.inflight ??= this.fetchToken().finally(() => (this.inflight = null));
    return this.inflight;
  }

  private async fetchToken(): Promise<string> {
    if (!this.discovery) throw new HttpErrorWithHeaders(503, 'On-boarding is not configured (CAS_ONBOARDING_CLIENT_ID / CAS_ONBOARDING_CLIENT_SECRET).', {});
    try {
      this.tokenRequests++;
      const tokens = await (await loadOidc()).clientCredentialsGrant(await this.discovery.get(), { scope: SCOPE });
      const lifetimeMs = (tokens.expires_in ?? 300) * 1000;
      this.token = { value: tokens.access_token, refreshAt: Date.now() + Math.max(lifetimeMs - REFRESH_MARGIN_MS, lifetimeMs / 2) };
      return tokens.access_token;
    } catch (err) {
      this.logger.warn({ event: 'cas_api.token_failed', error: err instanceof Error ? err.message : String(err) });
      throw unavailable();
    }
  }
}

export class CasApiStatusError extends Error {
  constructor(readonly status: number) {
    super(`cas-api answered ${status}`);
  }
}

function unavailable(): HttpErrorWithHeaders {
  return new HttpErrorWithHeaders(503, 'The central authentication service is not reachable; try again shortly.', { 'Retry-After': '5' });
}
