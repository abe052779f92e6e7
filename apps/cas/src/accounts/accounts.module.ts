import { Module } from '@nestjs/common';
import { AccountsRepository } from './accounts.repository.js';
import { AccountsService } from './accounts.service.js';
import { PasswordHasher } from './password-hasher.js';

@Module({
  providers: [AccountsRepository, AccountsService, PasswordHasher],
  exports: [AccountsService, PasswordHasher],
})
export class AccountsModule {}
