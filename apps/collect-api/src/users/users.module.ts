import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminBootstrap } from './admin-bootstrap.js';
import { CurrentProfileService } from './current-profile.service.js';
import { PasswordHasher } from './password-hasher.js';
import { ApiTokenEntity, TempTokenEntity } from './user-token.entity.js';
import { UserEntity } from './user.entity.js';
import { UserTokensRepository } from './user-tokens.repository.js';
import { UserTokensService } from './user-tokens.service.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/** Accounts and their API and temporary tokens (the HTTP side is in profiles/). */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, ApiTokenEntity, TempTokenEntity])],
  providers: [CurrentProfileService, PasswordHasher, UsersRepository, UserTokensRepository, UsersService, UserTokensService, AdminBootstrap],
  exports: [UsersService, UserTokensService, CurrentProfileService],
})
export class UsersModule {}
