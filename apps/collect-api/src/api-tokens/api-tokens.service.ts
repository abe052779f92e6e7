import { ForbiddenException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser, PersonalTokenScope } from '../auth/authenticated-user.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { hashToken } from '../crypto/secrets.js';
import { FormAccessService, PERMISSION_DENIED } from '../forms/form-access.service.js';
import { UsersService } from '../users/users.service.js';
import { ApiTokensRepository, type PersonalTokenRow } from './api-tokens.repository.js';
import type { ApiTokenBody, CreatedApiTokenBody } from './api-tokens.dto.js';
import { LastUsedBatch } from './last-used.js';
import { PersonalTokenCheck } from './personal-token.verifier.js';
import { newPersonalToken, PREFIX_LENGTH } from './token-format.js';

/** Whose tokens: the caller of the API, or the signed-in user of the /tokens page. */
export type TokenOwner = Pick<AuthenticatedUser, 'id' | 'username' | 'isSuperuser'>;

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 90;

/** What a new token is asked to be. */
export interface TokenRequest {
  name: string;
  scopes: PersonalTokenScope[];
  forms?: number[] | null;
  expiresAt?: string | null;
}

/**
 * Personal access tokens of a user (docs/auth.md, "Personal access tokens"): created with the
 * user's own session only (the routes and the /tokens page see to that), listed without the
 * token, revoked by their user or a platform admin.
 */
@Injectable()
export class ApiTokensService {
  constructor(
    private readonly repo: ApiTokensRepository,
    private readonly access: FormAccessService,
    private readonly users: UsersService,
    private readonly check: PersonalTokenCheck,
    private readonly lastUsed: LastUsedBatch,
    @Inject(COLLECT_CONFIG) private readonly config: Pick<CollectConfig, 'API_TOKEN_MAX_DAYS'>,
  ) {}

  /** A new token for the caller; the answer is the only place the token is ever shown. */
  async create(caller: TokenOwner, request: TokenRequest, now = Date.now()): Promise<CreatedApiTokenBody> {
    const expiresAt = this.expiry(request.expiresAt, now);
    const forms = request.forms ?? null;
    if (forms) {
      const hidden: string[] = [];
      for (const id of forms) if (!(await this.access.access(caller, id))) hidden.push(`Form ${id} not found.`);
      if (hidden.length) throw new FieldValidationError({ forms: hidden });
    }
    // A prefix already taken (about one chance in 2^41 per pair of tokens) draws another token.
    for (let attempt = 0; attempt < 5; attempt++) {
      const token = newPersonalToken();
      const row = await this.repo.insert({
        userId: caller.id, name: request.name, prefix: token.slice(0, PREFIX_LENGTH), tokenHash: hashToken(token),
        scopes: [...new Set(request.scopes)], forms: forms ? [...forms].sort((a, b) => a - b) : null, expiresAt,
      });
      if (row) return { ...this.present(row), token };
    }
    throw new Error('no free personal-token prefix after 5 draws');
  }

  /** The live (not revoked) tokens of the caller, or of `username` for a platform admin. */
  async list(caller: TokenOwner, username?: string): Promise<ApiTokenBody[]> {
    let userId = caller.id;
    if (username !== undefined && username !== caller.username) {
      if (!caller.isSuperuser) throw new ForbiddenException({ detail: PERMISSION_DENIED });
      const user = await this.users.findByUsername(username);
      if (!user) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
      userId = user.id;
    }
    return (await this.repo.listLive(userId)).map((row) => this.present(row));
  }

  /** Revokes the caller's token (any token for a platform admin); 404 for one it may not see or already revoked. */
  async revoke(caller: TokenOwner, id: number): Promise<void> {
    const row = await this.repo.findLive(id);
    if (!row || (row.userId !== caller.id && !caller.isSuperuser)) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const prefix = await this.repo.revoke(id);
    if (!prefix) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    this.check.forget(prefix);
  }

  private expiry(value: string | null | undefined, now: number): Date {
    const maxDays = this.config.API_TOKEN_MAX_DAYS;
    if (value === undefined || value === null) return new Date(now + Math.min(DEFAULT_DAYS, maxDays) * DAY_MS);
    const at = Date.parse(value);
    if (at <= now) throw new FieldValidationError({ expires_at: ['Must lie in the future.'] });
    if (at > now + maxDays * DAY_MS) throw new FieldValidationError({ expires_at: [`Must lie at most ${maxDays} days ahead (API_TOKEN_MAX_DAYS).`] });
    return new Date(at);
  }

  private present(row: PersonalTokenRow): ApiTokenBody {
    const unwritten = this.lastUsed.unwritten(row.id);
    const lastUsed = unwritten && (!row.lastUsedAt || unwritten > row.lastUsedAt) ? unwritten : row.lastUsedAt;
    return {
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes,
      forms: row.forms,
      expires_at: row.expiresAt.toISOString(),
      created_at: row.createdAt.toISOString(),
      last_used_at: lastUsed ? lastUsed.toISOString() : null,
    };
  }
}
