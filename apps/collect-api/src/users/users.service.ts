import { Injectable, Logger } from '@nestjs/common';
import { FieldValidationError } from '@collect/contracts';
import type { UserEntity } from './user.entity.js';
import { PasswordHasher } from './password-hasher.js';
import { UsersRepository } from './users.repository.js';

export interface CreateUserInput {
  username: string;
  password: string | null;
  email?: string;
  firstName?: string;
  lastName?: string;
  isSuperuser?: boolean;
  city?: string;
  country?: string;
  organization?: string;
  website?: string;
  twitter?: string;
  requireAuth?: boolean;
}

/** Accounts: creation (registration, admin command, admin from configuration) and passwords. */
@Injectable()
export class UsersService {
  private readonly logger = new Logger('UsersService');

  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
  ) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.users.findById(id);
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.users.findByUsername(username);
  }

  findByCasSubject(casSubject: string): Promise<UserEntity | null> {
    return this.users.findByCasSubject(casSubject);
  }

  findByCasSubjects(casSubjects: string[]): Promise<UserEntity[]> {
    return this.users.findByCasSubjects(casSubjects);
  }

  findByCasClientId(clientId: string): Promise<UserEntity | null> {
    return this.users.findByCasClientId(clientId);
  }

  listServiceAccounts(): Promise<UserEntity[]> {
    return this.users.listServiceAccounts();
  }

  /**
   * A password-less account linked to a CAS subject (on-boarded user) or CAS client (service
   * account); null when the username or the link is taken (unique indexes decide).
   */
  createLinked(input: { username: string; email?: string; firstName?: string; lastName?: string; casSubject?: string; casClientId?: string }): Promise<UserEntity | null> {
    return this.users.insert({
      username: input.username,
      email: input.email ?? '',
      passwordHash: null,
      firstName: input.firstName ?? '',
      lastName: input.lastName ?? '',
      isSuperuser: false,
      casSubject: input.casSubject ?? null,
      casClientId: input.casClientId ?? null,
      isServiceAccount: !!input.casClientId,
    });
  }

  async setActive(id: number, isActive: boolean): Promise<void> {
    await this.users.update(id, { isActive });
  }

  /** Creates an account; 400 `{"username": [...]}` when the name is taken. */
  async create(input: CreateUserInput): Promise<UserEntity> {
    const created = await this.users.insert({
      username: input.username,
      email: input.email ?? '',
      passwordHash: input.password === null ? null : await this.passwords.hash(input.password),
      firstName: input.firstName ?? '',
      lastName: input.lastName ?? '',
      isSuperuser: input.isSuperuser ?? false,
      city: input.city ?? '',
      country: input.country ?? '',
      organization: input.organization ?? '',
      website: input.website ?? '',
      twitter: input.twitter ?? '',
      requireAuth: input.requireAuth ?? false,
    });
    if (!created) throw new FieldValidationError({ username: [`A user with the username '${input.username}' already exists.`] });
    this.logger.log({ userId: created.id, username: created.username, superuser: created.isSuperuser }, 'user created');
    return created;
  }

  /**
   * Creates the user, or updates the password (and email, superuser flag) of an existing one.
   * Used by COLLECT_ADMIN_USERNAME at start and by `users create`, so both are idempotent.
   *
   * Taking over an existing account (a new password, a promotion to platform admin, a
   * reactivation) revokes every credential it held: someone may have registered the username
   * first and kept its tokens (docs/security.md, "Promoting an existing account"). The same
   * password and flags again (every restart with COLLECT_ADMIN_*) change and revoke nothing.
   */
  async createOrUpdate(input: CreateUserInput & { password: string }): Promise<{ user: UserEntity; created: boolean; credentialsRevoked: boolean }> {
    const existing = await this.users.findByUsername(input.username);
    if (!existing) {
      try {
        return { user: await this.create(input), created: true, credentialsRevoked: false };
      } catch (err) {
        // Another process created it between our read and insert (several pods starting).
        if (!(err instanceof FieldValidationError)) throw err;
      }
    }
    const user = existing ?? (await this.users.findByUsername(input.username))!;
    const samePassword = await this.passwords.verify(user.passwordHash, input.password);
    const promoted = input.isSuperuser === true && !user.isSuperuser;
    const takenOver = !samePassword || promoted || !user.isActive;
    const changes: Partial<UserEntity> = { isActive: true };
    if (!samePassword) changes.passwordHash = await this.passwords.hash(input.password);
    if (input.isSuperuser !== undefined) changes.isSuperuser = input.isSuperuser;
    if (input.email) changes.email = input.email;
    if (takenOver) {
      await this.users.updateAndRevokeCredentials(user.id, changes);
      this.logger.warn({ userId: user.id, username: user.username, promoted, passwordChanged: !samePassword }, 'existing account taken over: its tokens and sessions were revoked');
    } else {
      await this.users.update(user.id, changes);
    }
    return { user: { ...user, ...changes } as UserEntity, created: false, credentialsRevoked: takenOver };
  }

  /** The user when the password matches (active or not: the caller decides what inactive means). */
  async verifyCredentials(username: string, password: string): Promise<UserEntity | null> {
    const user = await this.users.findByUsername(username);
    const ok = await this.passwords.verify(user?.passwordHash ?? null, password);
    return ok ? user : null;
  }
}
