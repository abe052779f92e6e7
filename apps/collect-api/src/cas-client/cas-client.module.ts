import { Global, Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { CasSessionsRepository } from './cas-sessions.repository.js';
import { CasSignInController } from './cas-sign-in.controller.js';
import { CasSignInService } from './cas-sign-in.service.js';
import { CasTokenResolver } from './cas-token.resolver.js';

/**
 * The client side of the CAS (apps/cas), collect-api as a CAS application: the CAS Bearer token
 * source and the BFF sign-in. Global so the /o/authorize login step (oauth2) and on-boarding can
 * read or end CAS sessions.
 */
@Global()
@Module({
  imports: [UsersModule],
  controllers: [CasSignInController],
  providers: [CasTokenResolver, CasSessionsRepository, CasSignInService],
  exports: [CasSignInService, CasTokenResolver],
})
export class CasClientModule {}
