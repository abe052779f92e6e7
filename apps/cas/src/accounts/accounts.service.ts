import { Injectable, Logger } from '@nestjs/common';
import type { AccountEntity } from './account.entity.js';
import { AccountsRepository } from './accounts.repository.js';
import { PasswordHasher } from './password-hasher.js';

export interface AccountInput {
  username: string;
  password?: string;
  email?: string;
  given_name?: string;
  family_name?: string;
  enabled?: boolean;
}

export class AccountError extends Error {}

@Injectable()
export class AccountsService {
  private readonly logger = new Logger('accounts');

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  findById(id: string): Promise<AccountEntity | null> {
    return this.accounts.findById(id);
  }

  findByUsername(username: string): Promise<AccountEntity | null> {
    return this.accounts.findByUsername(username);
  }

  async create(input: AccountInput): Promise<AccountEntity> {
    if (await this.accounts.findByUsername(input.username)) throw new AccountError(`user ${input.username} already exists`);
    return this.upsert(input);
  }

  /**
   * Creates or updates by username (the seed's "realm import" semantics). A password that
   * already verifies is not re-hashed, so re-applying a seed at every start stays cheap.
   */
  async upsert(input: AccountInput): Promise<AccountEntity> {
    const existing = await this.accounts.findByUsername(input.username);
    let passwordHash = existing?.passwordHash ?? null;
    if (input.password !== undefined && !(await this.hasher.verify(passwordHash, input.password))) {
      passwordHash = await this.hasher.hash(input.password);
    }
    const saved = await this.accounts.save({
      ...(existing ?? {}),
      username: input.username,
      email: input.email ?? existing?.email ?? '',
      givenName: input.given_name ?? existing?.givenName ?? '',
      familyName: input.family_name ?? existing?.familyName ?? '',
      enabled: input.enabled ?? existing?.enabled ?? true,
      passwordHash,
    });
    if (!existing) this.logger.log({ event: 'user.created', user_id: saved.id, username: saved.username });
    return saved;
  }

  async setPassword(username: string, password: string): Promise<void> {
    const account = await this.require(username);
    account.passwordHash = await this.hasher.hash(password);
    await this.accounts.save(account);
    this.logger.log({ event: 'user.password_set', user_id: account.id });
  }

  async setEnabled(username: string, enabled: boolean): Promise<void> {
    const account = await this.require(username);
    account.enabled = enabled;
    await this.accounts.save(account);
    this.logger.log({ event: enabled ? 'user.enabled' : 'user.disabled', user_id: account.id });
  }

  /** The account when username and password match an enabled user; null otherwise (same cost either way). */
  async checkCredentials(username: string, password: string): Promise<AccountEntity | null> {
    const account = await this.accounts.findByUsername(username);
    if (!account) {
      await this.hasher.burnTime(password);
      return null;
    }
    const ok = await this.hasher.verify(account.passwordHash, password);
    return ok && account.enabled ? account : null;
  }

  private async require(username: string): Promise<AccountEntity> {
    const account = await this.accounts.findByUsername(username);
    if (!account) throw new AccountError(`no user ${username}`);
    return account;
  }
}
