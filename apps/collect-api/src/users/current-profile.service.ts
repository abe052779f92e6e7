import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { TtlCache } from '../cache/ttl-cache.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
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
 * is cached per user for AUTH_TOKEN_CACHE_TTL_MS, never past the temporary token's expiry, and
 * dropped at once when this process rotates or expires a token of that user.
 */
@Injectable()
export class CurrentProfileService {
  private readonly cache: TtlCache<{ body: CurrentProfile; validUntil: number }>;

  constructor(
    private readonly users: UsersService,
    private readonly tokens: UserTokensService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    this.cache = new TtlCache(config.AUTH_TOKEN_CACHE_TTL_MS);
    tokens.onChange((userId) => this.cache.delete(String(userId)));
  }

  /**
   * The profile alone, for a Bearer caller: neither token is shown nor created
   * (docs/security.md, "The credential rule").
   */
  async withoutTokens(userId: number): Promise<ProfileBody> {
    const user = await this.users.findById(userId);
    if (!user) throw new NotFoundException();
    return presentProfile(user, this.config.PUBLIC_BASE_URL, true);
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
