import { Module } from '@nestjs/common';
import { AccountsRepository } from './accounts.repository.js';
import { AccountsService } from './accounts.service.js';
import { LoginAttemptsRepository } from './login-attempts.repository.js';
import { LoginThrottleService } from './login-throttle.service.js';
import { PasswordHasher } from './password-hasher.js';

@Module({
  providers: [AccountsRepository, AccountsService, PasswordHasher, LoginAttemptsRepository, LoginThrottleService],
  exports: [AccountsService, PasswordHasher, LoginThrottleService],
})
export class AccountsModule {}
