import { Module } from '@nestjs/common';
import { CAS_API_AUDIENCE } from '@collect/contracts';
import { JwtValidationModule } from '@collect/jwt-validation';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import { ClientCredentialsOnlyGuard } from './client-credentials-only.guard.js';
import { UserSearchRepository } from './user-search.repository.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/**
 * cas-api, the user-administration API. It accepts this CAS's own access tokens through
 * libs/jwt-validation (discovery + JWKS over HTTP, like any resource server), so it can be
 * split off onto its own host ({cas_api_url}) without changing how it authenticates.
 */
@Module({
  imports: [
    JwtValidationModule.forRootAsync({
      inject: [CAS_CONFIG],
      // typ at+jwt (RFC 9068): an ID token or any other JWT of this issuer is not an access token.
      useFactory: (config: CasConfig) => ({ issuer: config.CAS_ISSUER, audience: CAS_API_AUDIENCE, typ: 'at+jwt' }),
    }),
  ],
  controllers: [UsersController],
  providers: [UserSearchRepository, UsersService, ClientCredentialsOnlyGuard],
})
export class CasApiModule {}
