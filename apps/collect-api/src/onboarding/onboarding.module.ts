import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { CasApiClient } from './cas-api.client.js';
import { CasUsersController, ServiceAccountsController } from './onboarding.controller.js';
import { OnboardingService } from './onboarding.service.js';

/** `/api/v1/cas-users` and `/api/v1/service-accounts` (docs/cas-integration.md). */
@Module({
  imports: [UsersModule],
  controllers: [CasUsersController, ServiceAccountsController],
  providers: [CasApiClient, OnboardingService],
})
export class OnboardingModule {}
