import { KeyObject } from 'node:crypto';
import { importJWK, type JWK } from 'jose';
import { KeySourceUnavailableError } from './errors.js';
import { fetchJsonObject } from './http-json.js';
import type { ResolvedOptions, SupportedAlgorithm } from './options.js';

export interface PublishedKey {
  kid: string;
  key: KeyObject;
  /** The `alg` the key set pins the key to, if it does. */
  alg?: string;
}

export interface KeySourceStats {
  discoveryFetches: number;
  jwksFetches: number;
  jwksFetchFailures: number;
  keys: string[];
}

/**
 * The issuer's public keys: found through OIDC discovery, cached, refreshed in the background
 * when old, and refetched on an unknown `kid` at most once per cooldown, so a flood of tokens
 * with made-up `kid`s costs the CAS one request per cooldown. When the CAS is down the cached
 * keys keep working (stale beats unavailable: keys rotate slowly and the JWKS publishes the
 * previous key too).
 */
export class DiscoveryKeySource {
  private keys = new Map<string, PublishedKey>();
  private loadedAt: number | undefined;
  private lastAttemptAt: number | undefined;
  private inFlight: Promise<void> | undefined;
  private jwksUri: string | undefined;
  private discoveryFetchedAt: number | undefined;
  private readonly stats = { discoveryFetches: 0, jwksFetches: 0, jwksFetchFailures: 0 };

  constructor(private readonly options: ResolvedOptions) {
    this.jwksUri = options.jwksUri;
  }

  /** The cached key for `kid` when the cache is loaded and fresh: the hot path, without a promise. */
  peek(kid: string): PublishedKey | undefined {
    if (this.loadedAt === undefined || this.options.now() - this.loadedAt > this.options.jwksMaxAgeMs) return undefined;
    return this.keys.get(kid);
  }

  /**
   * The key for `kid`, or undefined when the issuer does not publish it (after a refetch, if
   * the cooldown allows one). Throws KeySourceUnavailableError only when no keys are cached.
   */
  async getKey(kid: string): Promise<PublishedKey | undefined> {
    const now = this.options.now();
    if (this.loadedAt === undefined) {
      await this.refresh(this.options.unavailableRetryMs);
      if (this.loadedAt === undefined) throw new KeySourceUnavailableError(`Signing keys of ${this.options.issuer} are unavailable.`);
    } else if (now - this.loadedAt > this.options.jwksMaxAgeMs) {
      // Old but usable: refresh without making this request wait (errors are logged, keys kept).
      void this.refresh(this.options.jwksCooldownMs);
    }
    const known = this.keys.get(kid);
    if (known) return known;
    await this.refresh(this.options.jwksCooldownMs);
    return this.keys.get(kid);
  }

  /** Fetches keys now unless one fetch already runs or the last attempt is younger than `minIntervalMs`. */
  private refresh(minIntervalMs: number): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const now = this.options.now();
    if (this.lastAttemptAt !== undefined && now - this.lastAttemptAt < minIntervalMs) return Promise.resolve();
    this.lastAttemptAt = now;
    this.inFlight = this.load()
      .catch((err: unknown) => {
        this.stats.jwksFetchFailures++;
        // The jwks_uri may have moved: read discovery again next time.
        this.discoveryFetchedAt = undefined;
        this.options.logger?.warn(`jwt-validation: could not refresh signing keys of ${this.options.issuer}: ${(err as Error).message}`);
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async load(): Promise<void> {
    const jwksUri = await this.resolveJwksUri();
    this.stats.jwksFetches++;
    const body = await fetchJsonObject(jwksUri, this.options.httpTimeoutMs);
    if (!Array.isArray(body.keys)) throw new Error(`${jwksUri}: no "keys" array`);
    const keys = new Map<string, PublishedKey>();
    for (const jwk of body.keys as JWK[]) {
      const key = await this.importKey(jwk);
      if (key && !keys.has(key.kid)) keys.set(key.kid, key);
    }
    // An empty set is a broken issuer, not a reason to forget the keys we trust.
    if (keys.size === 0) throw new Error(`${jwksUri}: no usable signing keys`);
    this.keys = keys;
    this.loadedAt = this.options.now();
    this.options.logger?.debug?.(`jwt-validation: loaded ${keys.size} signing key(s) from ${jwksUri}`);
  }

  /** Public RSA signing keys with a `kid` only; anything else in the set is skipped, not fatal. */
  private async importKey(jwk: JWK): Promise<PublishedKey | undefined> {
    if (!jwk || typeof jwk !== 'object' || jwk.kty !== 'RSA' || typeof jwk.kid !== 'string' || !jwk.kid) return undefined;
    if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
    if ('d' in jwk || 'p' in jwk) return undefined; // a private key published by mistake: never use it
    if (jwk.alg !== undefined && !this.options.algorithms.includes(jwk.alg as SupportedAlgorithm)) return undefined;
    try {
      const imported = await importJWK({ kty: jwk.kty, n: jwk.n, e: jwk.e, ext: true }, jwk.alg ?? this.options.algorithms[0]);
      const key = imported instanceof Uint8Array ? undefined : KeyObject.from(imported);
      if (!key || key.type !== 'public' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return undefined;
      return { kid: jwk.kid, key, alg: jwk.alg };
    } catch (err) {
      this.options.logger?.warn(`jwt-validation: skipped key ${jwk.kid}: ${(err as Error).message}`);
      return undefined;
    }
  }

  private async resolveJwksUri(): Promise<string> {
    if (this.options.jwksUri) return this.options.jwksUri;
    const now = this.options.now();
    if (this.jwksUri && this.discoveryFetchedAt !== undefined && now - this.discoveryFetchedAt < this.options.discoveryMaxAgeMs) return this.jwksUri;
    const url = this.options.discoveryUrl ?? `${this.options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    this.stats.discoveryFetches++;
    const doc = await fetchJsonObject(url, this.options.httpTimeoutMs);
    // OIDC Discovery §4.3: the document must name the issuer we were configured with.
    if (doc.issuer !== this.options.issuer) throw new Error(`${url}: issuer ${JSON.stringify(doc.issuer)} is not ${JSON.stringify(this.options.issuer)}`);
    if (typeof doc.jwks_uri !== 'string' || !/^https?:\/\//.test(doc.jwks_uri)) throw new Error(`${url}: no jwks_uri`);
    this.jwksUri = doc.jwks_uri;
    this.discoveryFetchedAt = now;
    return this.jwksUri;
  }

  /** Resolves when no key fetch is running (a background refresh included). */
  async settled(): Promise<void> {
    await this.inFlight;
  }

  getStats(): KeySourceStats {
    return { ...this.stats, keys: [...this.keys.keys()] };
  }
}
