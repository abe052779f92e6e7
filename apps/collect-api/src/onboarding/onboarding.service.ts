import { Injectable, Logger } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import { NotFoundException } from '@nestjs/common';
import { CollectConfig } from '../config/collect-config.js';
import { CasSignInService } from '../cas-client/cas-sign-in.service.js';
import { CasTokenResolver } from '../cas-client/cas-token.resolver.js';
import type { UserEntity } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { CasApiClient } from './cas-api.client.js';
import { LOCAL_USERNAME, USERNAME_MESSAGE, type CasUserResult, type CasUserSearchQueryDto, type CasUsersPage, type CreateServiceAccountDto, type LocalUserBody, type OnboardCasUserDto, type OnboardedUserBody, type ServiceAccountBody } from './onboarding.dto.js';

/**
 * Who may use collect-api among the CAS's users and clients (spec §5.3 on-boarding). On-boarding
 * creates a password-less local user linked to the CAS subject; off-boarding deactivates it
 * (its forms and roles stay, and on-boarding again re-activates it) and ends its sessions.
 */
@Injectable()
export class OnboardingService {
  private readonly logger = new Logger('Onboarding');

  constructor(
    private readonly casApi: CasApiClient,
    private readonly users: UsersService,
    private readonly signIn: CasSignInService,
    private readonly tokens: CasTokenResolver,
    private readonly config: CollectConfig,
  ) {}

  async search(params: CasUserSearchQueryDto): Promise<CasUsersPage> {
    const page = await this.casApi.searchUsers(params);
    const linked = new Map((await this.users.findByCasSubjects(page.results.map((u) => u.id))).map((u) => [u.casSubject!, u]));
    return {
      count: page.count,
      next: this.ownLink(page.next),
      previous: this.ownLink(page.previous),
      results: page.results.map((u) => {
        const local = linked.get(u.id);
        return { ...u, onboarded: !!local?.isActive, local_user: local ? { id: local.id, username: local.username, is_active: local.isActive } : null };
      }),
    };
  }

  /** `created` false when the subject was already on-boarded (re-activated if it was off-boarded). */
  async onboard(body: OnboardCasUserDto): Promise<{ user: OnboardedUserBody; created: boolean }> {
    try {
      return await this.link(body.cas_user_id, body.username);
    } finally {
      // After the write, so a token arriving meanwhile cannot re-cache the old answer.
      this.tokens.forget({ casSubject: body.cas_user_id });
    }
  }

  private async link(casUserId: string, wanted: string | undefined): Promise<{ user: OnboardedUserBody; created: boolean }> {
    const existing = await this.users.findByCasSubject(casUserId);
    if (existing) {
      if (!existing.isActive) await this.users.setActive(existing.id, true);
      return { user: onboarded({ ...existing, isActive: true }), created: false };
    }
    const casUser = await this.casApi.getUser(casUserId);
    if (!casUser) throw new FieldValidationError({ cas_user_id: ['No user with this id in the central authentication service.'] });
    if (!casUser.enabled) throw new FieldValidationError({ cas_user_id: ['This user is disabled in the central authentication service.'] });
    const username = wanted ?? casUser.username;
    const created = await this.users.createLinked({ username, email: casUser.email, firstName: casUser.given_name, lastName: casUser.family_name, casSubject: casUser.id });
    if (!created) {
      // Lost a race with another admin on-boarding the same subject: answer as if it had been first.
      const raced = await this.users.findByCasSubject(casUser.id);
      if (raced) return { user: onboarded(raced), created: false };
      throw new FieldValidationError({ username: [`A user with the username '${username}' already exists; send another "username".`] });
    }
    this.logger.log({ event: 'cas_user.onboarded', userId: created.id });
    return { user: onboarded(created), created: true };
  }

  async offboard(casUserId: string): Promise<void> {
    const user = await this.users.findByCasSubject(casUserId);
    if (!user) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    await this.users.setActive(user.id, false);
    this.tokens.forget({ casSubject: casUserId });
    await this.signIn.endSessionsOf(user.id);
    this.logger.log({ event: 'cas_user.offboarded', userId: user.id });
  }

  async addServiceAccount(body: CreateServiceAccountDto): Promise<{ account: ServiceAccountBody; created: boolean }> {
    try {
      return await this.linkClient(body.client_id, body.username);
    } finally {
      this.tokens.forget({ casClientId: body.client_id });
    }
  }

  private async linkClient(clientId: string, wanted: string | undefined): Promise<{ account: ServiceAccountBody; created: boolean }> {
    // The default username is the client id, which may hold ':' (a username may not).
    const username = wanted ?? clientId.slice(0, 150);
    if (!LOCAL_USERNAME.test(username)) throw new FieldValidationError({ username: [USERNAME_MESSAGE] });
    const existing = await this.users.findByCasClientId(clientId);
    if (existing) {
      if (!existing.isActive) await this.users.setActive(existing.id, true);
      return { account: serviceAccount({ ...existing, isActive: true }), created: false };
    }
    const created = await this.users.createLinked({ username, casClientId: clientId });
    if (!created) {
      const raced = await this.users.findByCasClientId(clientId);
      if (raced) return { account: serviceAccount(raced), created: false };
      throw new FieldValidationError({ username: [`A user with the username '${username}' already exists; send another "username".`] });
    }
    this.logger.log({ event: 'service_account.created', userId: created.id });
    return { account: serviceAccount(created), created: true };
  }

  async listServiceAccounts(): Promise<ServiceAccountBody[]> {
    return (await this.users.listServiceAccounts()).map(serviceAccount);
  }

  async removeServiceAccount(clientId: string): Promise<void> {
    const user = await this.users.findByCasClientId(clientId);
    if (!user) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    await this.users.setActive(user.id, false);
    this.tokens.forget({ casClientId: clientId });
    this.logger.log({ event: 'service_account.deactivated', userId: user.id });
  }

  /** cas-api's next/previous links, re-pointed at our endpoint with the same query. */
  private ownLink(link: string | null): string | null {
    if (!link) return null;
    return `${this.config.PUBLIC_BASE_URL}/api/v1/cas-users${new URL(link).search}`;
  }
}

function local(u: UserEntity): LocalUserBody {
  return { id: u.id, username: u.username, email: u.email, first_name: u.firstName, last_name: u.lastName, is_active: u.isActive, date_joined: new Date(u.dateJoined).toISOString() };
}

function onboarded(u: UserEntity): OnboardedUserBody {
  return { ...local(u), cas_user_id: u.casSubject! };
}

function serviceAccount(u: UserEntity): ServiceAccountBody {
  return { ...local(u), client_id: u.casClientId! };
}
