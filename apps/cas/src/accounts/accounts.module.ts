import { Module } from '@nestjs/common';
import { AccountsRepository } from './accounts.repository.js';
import { AccountsService } from './accounts.service.js';
import { LoginFailuresRepository } from './login-failures.repository.js';
import { LoginThrottleService } from './login-throttle.service.js';
import { PasswordHasher } from './password-hasher.js';

@Module({
  providers: [AccountsRepository, AccountsService, PasswordHasher, LoginFailuresRepository, LoginThrottleService],
  exports: [AccountsService, PasswordHasher, LoginThrottleService],
})
export class AccountsModule {}
