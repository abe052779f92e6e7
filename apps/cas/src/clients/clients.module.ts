import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ClientsRepository } from './clients.repository.js';
import { ClientsService } from './clients.service.js';
import { SeedService } from './seed.service.js';

@Module({
  imports: [AccountsModule],
  providers: [ClientsRepository, ClientsService, SeedService],
  exports: [ClientsService, SeedService],
})
export class ClientsModule {}
