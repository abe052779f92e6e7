import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import { AuthorizeController } from './authorize.controller.js';
import { OAuthApplicationsController } from './oauth-applications.controller.js';
import { OAuthApplicationsService } from './oauth-applications.service.js';
import { OAuthApplicationEntity, OAuthGrantEntity, OAuthTokenEntity } from './oauth2.entities.js';
import { OAuth2Repository } from './oauth2.repository.js';
import { OAuth2Service } from './oauth2.service.js';
import { TokenController } from './token.controller.js';

/** The local OAuth 2.0 provider at /o/ and its application registry. */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthApplicationEntity, OAuthGrantEntity, OAuthTokenEntity]), UsersModule],
  controllers: [AuthorizeController, TokenController, OAuthApplicationsController],
  providers: [OAuth2Repository, OAuthApplicationsService, OAuth2Service],
  exports: [OAuthApplicationsService],
})
export class OAuth2Module {}
