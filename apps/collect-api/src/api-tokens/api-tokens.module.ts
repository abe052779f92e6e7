import { Module } from '@nestjs/common';
import { FormsModule } from '../forms/forms.module.js';
import { UsersModule } from '../users/users.module.js';
import { ApiTokensController } from './api-tokens.controller.js';
import { ApiTokensRepository } from './api-tokens.repository.js';
import { ApiTokensService } from './api-tokens.service.js';
import { LastUsedBatch } from './last-used.js';
import { PersonalTokenCheck } from './personal-token.verifier.js';
import { TokensPageController } from './tokens-page.controller.js';

/**
 * Personal access tokens: the API, the /tokens page for CAS-signed-in users, and the check the
 * AuthGuard calls for a `cpat_` credential (registered at start; docs/auth.md).
 */
@Module({
  imports: [FormsModule, UsersModule],
  controllers: [ApiTokensController, TokensPageController],
  providers: [ApiTokensRepository, ApiTokensService, LastUsedBatch, PersonalTokenCheck],
})
export class ApiTokensModule {}
