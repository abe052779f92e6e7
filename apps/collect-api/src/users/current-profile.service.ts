import { Injectable, NotFoundException } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { TtlCache } from '../cache/ttl-cache.js';
import { CollectConfig } from '../config/collect-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { presentProfile, ProfileBody } from './profile.presenter.js';
import { UserTokensService } from './user-tokens.service.js';
import { UsersService } from './users.service.js';

/** `GET /api/v1/user` for Basic, `Token` and `TempToken` callers: the profile with both tokens. */
export class CurrentProfile extends ProfileBody {
  @ApiPropertyOptional({ type: 'string', description: 'The API token (40 hex); absent for Bearer callers.' })
  api_token: string;

  @ApiPropertyOptional({ type: 'string', description: 'The temporary token (40 hex), created or renewed on read; absent for Bearer callers.' })
  temp_token: string;
}

/**
 * `GET /api/v1/user`: the caller's profile with both tokens (Basic, Token, TempToken callers). Clients poll it, so the answer
 * is cached per user for AUTH_TOKEN_CACHE_TTL_MS, never past the temporary token's expiry,
 * dropped at once when this process rotates or expires a token of that user, and in every
 * process when the user row changes (ChangeNotifications). Bearer callers' profile likewise.
 * Its constructor reads like CasTokenResolver's on purpose: both keep answers of the
 * authentication path for the same TTL and drop them on the same notification.
 */
@Injectable()
export class CurrentProfileService {
  private readonly cache: TtlCache<{ body: CurrentProfile; validUntil: number }>;
  /** The profile alone, for Bearer callers (same TTL and invalidation). */
  private readonly bearerCache: TtlCache<ProfileBody>;

  constructor(
    private readonly users: UsersService,
    private readonly tokens: UserTokensService,
    private readonly config: CollectConfig,
    changes: ChangeNotifications,
  ) {
    this.cache = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    this.bearerCache = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    tokens.onChange((userId) => this.cache.delete(String(userId)));
    // The user row changed in some process (profile, deactivation): both answers are built again.
    changes.on('user', (id) => {
      this.cache.delete(id);
      this.bearerCache.delete(id);
    });
  }

  /**
   * The profile alone, for a Bearer caller: neither token is shown nor created
   * (docs/security.md, "The credential rule").
   */
  async withoutTokens(userId: number): Promise<ProfileBody> {
    const hit = this.bearerCache.get(String(userId));
    if (hit) return hit;
    const user = await this.users.findById(userId);
    if (!user) throw new NotFoundException();
    const body = presentProfile(user, this.config.PUBLIC_BASE_URL, true);
    this.bearerCache.set(String(userId), body);
    return body;
  }

  async get(userId: number): Promise<CurrentProfile> {
    const hit = this.cache.get(String(userId));
    if (hit && hit.validUntil > Date.now()) return hit.body;
    const user = await this.users.findById(userId);
    if (!user) throw new NotFoundException();
    const [apiToken, temp] = await Promise.all([this.tokens.apiToken(user.id), this.tokens.tempTokenWithExpiry(user.id)]);
    const body = { ...presentProfile(user, this.config.PUBLIC_BASE_URL, true), api_token: apiToken, temp_token: temp.key };
    this.cache.set(String(userId), { body, validUntil: temp.expiresAt });
    return body;
  }
}
