import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AuthenticatedUser, AuthScheme } from '../auth/authenticated-user.js';
import { PersonalTokens, type PersonalTokenVerifier } from '../auth/personal-tokens.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { hashToken, safeEqual } from '../crypto/secrets.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { NotifiedCache } from '../database/notified-cache.js';
import { ApiTokensRepository, type PersonalTokenOwnerRow } from './api-tokens.repository.js';
import { LastUsedBatch } from './last-used.js';
import { PREFIX_LENGTH, TOKEN_LENGTH } from './token-format.js';

const MAX_ENTRIES = 10_000;

/**
 * The check of a presented personal access token, registered with the AuthGuard
 * (auth/personal-tokens.ts). The row is found by the token's first 12 characters and the
 * token's SHA-256 compared in constant time with the stored one (docs/auth.md, "Personal
 * access tokens"). Rows are cached per process under their prefix; a revocation, a new token
 * or a change of the user row reaches every process's cache when it commits (PostgreSQL
 * notifications, `pat:<prefix>` and `user:<id>`), and while the notifications are down nothing
 * is served from the cache. AUTH_TOKEN_CACHE_TTL_MS bounds an entry's age besides.
 */
@Injectable()
export class PersonalTokenCheck implements PersonalTokenVerifier, OnModuleInit {
  private readonly rows: NotifiedCache<PersonalTokenOwnerRow | null>;

  constructor(
    private readonly repo: ApiTokensRepository,
    private readonly lastUsed: LastUsedBatch,
    private readonly registry: PersonalTokens,
    changes: ChangeNotifications,
    @Inject(COLLECT_CONFIG) config: Pick<CollectConfig, 'AUTH_TOKEN_CACHE_TTL_MS'>,
  ) {
    this.rows = new NotifiedCache(changes, { ttlMs: config.AUTH_TOKEN_CACHE_TTL_MS, maxEntries: MAX_ENTRIES });
    changes.on('pat', (prefix) => this.rows.invalidate(prefix));
    // A deactivated user, or a changed superuser flag: rare, so every entry goes.
    changes.on('user', () => this.rows.clear());
  }

  onModuleInit(): void {
    this.registry.register(this);
  }

  async verify(token: string, scheme: AuthScheme): Promise<AuthenticatedUser | null> {
    if (token.length !== TOKEN_LENGTH) return null;
    const prefix = token.slice(0, PREFIX_LENGTH);
    const row = await this.rows.getOrLoad(prefix, () => this.repo.findByPrefix(prefix));
    if (!row || !safeEqual(hashToken(token), row.tokenHash)) return null;
    if (row.revokedAt || !row.isActive || row.expiresAt.getTime() <= Date.now()) return null;
    this.lastUsed.touch(row.id);
    return {
      id: row.userId,
      username: row.username,
      isSuperuser: row.isSuperuser,
      scheme,
      scopes: [...row.scopes],
      personalToken: { id: row.id, scopes: row.scopes, forms: row.forms },
    };
  }

  /** Drops this process's entry at once (the notification does the same everywhere at commit). */
  forget(prefix: string): void {
    this.rows.invalidate(prefix);
  }
}
