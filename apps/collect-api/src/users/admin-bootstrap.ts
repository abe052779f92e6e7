import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CollectConfig } from '../config/collect-config.js';
import { UsersService } from './users.service.js';

/**
 * Creates or updates the platform admin of COLLECT_ADMIN_USERNAME / COLLECT_ADMIN_PASSWORD at
 * start; taking over an account someone else registered revokes its credentials (UsersService).
 */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('AdminBootstrap');

  constructor(
    private readonly users: UsersService,
    private readonly config: CollectConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { COLLECT_ADMIN_USERNAME: username, COLLECT_ADMIN_PASSWORD: password, COLLECT_ADMIN_EMAIL: email } = this.config;
    if (!username || !password) return;
    const { user, created, credentialsRevoked } = await this.users.createOrUpdate({ username, password, email, isSuperuser: true });
    this.logger.log({ userId: user.id, username: user.username, credentialsRevoked }, created ? 'platform admin created' : 'platform admin updated');
  }
}
