import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsRepository } from '../accounts/accounts.repository.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { PasswordHasher } from '../accounts/password-hasher.js';
import { ClientsRepository } from '../clients/clients.repository.js';
import { ClientsService } from '../clients/clients.service.js';
import type { CasConfig } from '../config/cas-config.js';
import { ConfigModule } from '../config/config.module.js';
import { dataSourceOptions } from '../database/data-source.js';
import { KeyStoreService } from '../oidc/key-store.service.js';
import { SigningKeysRepository } from '../oidc/signing-keys.repository.js';

/**
 * What the admin commands need, and nothing that starts on its own: no HTTP, no provider, no
 * seed import, no timers. A running service picks up changes within CAS_KEY_CHECK_SECONDS.
 */
@Module({})
export class CliModule {
  static forRoot(config: CasConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(config), TypeOrmModule.forRoot({ ...dataSourceOptions(config), extra: { max: 2 } })],
      providers: [AccountsRepository, AccountsService, PasswordHasher, ClientsRepository, ClientsService, SigningKeysRepository, KeyStoreService],
    };
  }
}
