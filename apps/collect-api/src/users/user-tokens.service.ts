import { Injectable } from '@nestjs/common';
import { CollectConfig } from '../config/collect-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { hashToken, newHexKey, SecretBox } from '../crypto/secrets.js';
import { TtlCache } from '../cache/ttl-cache.js';
import { UserTokensRepository, type TokenOwnerRow, type TokenTable } from './user-tokens.repository.js';

/** What a token resolves to; `createdAt` lets the caller check temporary-token expiry. */
export interface TokenOwner {
  userId: number;
  username: string;
  isSuperuser: boolean;
  isActive: boolean;
  createdAt: number;
}

/**
 * The API token and the temporary token of each user: created on first use, rotated,
 * expired, and resolved from a presented key (cached for AUTH_TOKEN_CACHE_TTL_MS).
 */
@Injectable()
export class UserTokensService {
  private readonly box: SecretBox;
  private readonly cache: TtlCache<TokenOwner | null>;
  private readonly tempLifetimeMs: number;
  private readonly listeners: Array<(userId: number) => void> = [];

  constructor(
    private readonly tokens: UserTokensRepository,
    config: CollectConfig,
    changes: ChangeNotifications,
  ) {
    this.box = new SecretBox(config.COLLECT_SECRET_KEY);
    this.cache = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    // A deactivated (or otherwise changed) user's tokens are resolved afresh in every process at once.
    changes.on('user', (id) => this.cache.deleteWhere((owner) => owner !== null && String(owner.userId) === id));
    this.tempLifetimeMs = config.DEFAULT_TEMP_TOKEN_EXPIRY_TIME * 1000;
  }

  /** The owner of a presented key, or null for an unknown key. */
  async resolve(table: TokenTable, key: string): Promise<TokenOwner | null> {
    const hash = hashToken(key);
    const cacheKey = `${table}:${hash}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) return cached;
    const row = await this.tokens.findOwnerByHash(table, hash);
    const owner = row ? toOwner(row) : null;
    this.cache.set(cacheKey, owner);
    return owner;
  }

  isTempTokenExpired(owner: TokenOwner, now = Date.now()): boolean {
    return owner.createdAt + this.tempLifetimeMs <= now;
  }

  /** The user's API token, created on first use (docs/api-conventions.md §Users and tokens). */
  async apiToken(userId: number): Promise<string> {
    const existing = await this.readKey('api_tokens', userId);
    if (existing) return existing;
    const key = newHexKey();
    await this.tokens.insertIfAbsent('api_tokens', userId, hashToken(key), this.box.encrypt(key));
    // Another request may have won the insert: return whatever is stored now.
    return (await this.readKey('api_tokens', userId)) ?? this.regenerateApiToken(userId);
  }

  async regenerateApiToken(userId: number): Promise<string> {
    const old = await this.tokens.findByUser('api_tokens', userId);
    const key = newHexKey();
    await this.tokens.upsert('api_tokens', userId, hashToken(key), this.box.encrypt(key));
    if (old) this.cache.delete(`api_tokens:${old.key_hash}`);
    this.changed(userId);
    return key;
  }

  /** The user's temporary token, created when absent and re-created when expired. */
  async tempToken(userId: number): Promise<string> {
    return (await this.tempTokenWithExpiry(userId)).key;
  }

  /** The temporary token and the instant (ms) it expires. */
  async tempTokenWithExpiry(userId: number): Promise<{ key: string; expiresAt: number }> {
    const row = await this.tokens.findByUser('temp_tokens', userId);
    const now = Date.now();
    if (row && row.created_at.getTime() + this.tempLifetimeMs > now) {
      const key = this.box.decrypt(row.key_encrypted);
      if (key) return { key, expiresAt: row.created_at.getTime() + this.tempLifetimeMs };
    }
    const key = newHexKey();
    // Replace only a row that is still expired (or unreadable), so concurrent calls converge.
    const threshold = row && this.box.decrypt(row.key_encrypted) === null ? new Date(8.64e15) : new Date(now - this.tempLifetimeMs);
    await this.tokens.upsert('temp_tokens', userId, hashToken(key), this.box.encrypt(key), threshold);
    if (row) this.cache.delete(`temp_tokens:${row.key_hash}`);
    this.changed(userId);
    const stored = await this.tokens.findByUser('temp_tokens', userId);
    const storedKey = stored ? this.box.decrypt(stored.key_encrypted) : null;
    return stored && storedKey ? { key: storedKey, expiresAt: stored.created_at.getTime() + this.tempLifetimeMs } : { key, expiresAt: now + this.tempLifetimeMs };
  }

  /** Called with the user id whenever one of the user's tokens changes (caches built on them). */
  onChange(listener: (userId: number) => void): void {
    this.listeners.push(listener);
  }

  private changed(userId: number): void {
    for (const listener of this.listeners) listener(userId);
  }

  /** Deletes the temporary token; false when the user had none. */
  async expireTempToken(userId: number): Promise<boolean> {
    const hash = await this.tokens.deleteForUser('temp_tokens', userId);
    if (hash) this.cache.delete(`temp_tokens:${hash}`);
    this.changed(userId);
    return hash !== null;
  }

  /** Forget cached lookups of one user (after disabling them, changing the superuser flag). */
  forgetUser(userId: number): void {
    this.cache.deleteWhere((owner) => owner?.userId === userId);
    this.changed(userId);
  }

  private async readKey(table: TokenTable, userId: number): Promise<string | null> {
    const row = await this.tokens.findByUser(table, userId);
    return row ? this.box.decrypt(row.key_encrypted) : null;
  }
}

function toOwner(row: TokenOwnerRow): TokenOwner {
  return {
    userId: row.user_id,
    username: row.username,
    isSuperuser: row.is_superuser,
    isActive: row.is_active,
    createdAt: new Date(row.created_at).getTime(),
  };
}
