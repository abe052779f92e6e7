import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { ClientRegistry } from './client-registry.js';
import { KeyStoreService } from './key-store.service.js';
import { OidcPayloadsRepository } from './oidc-payloads.repository.js';
import { OidcService } from './oidc.service.js';
import { SigningKeysRepository } from './signing-keys.repository.js';

@Module({
  imports: [AccountsModule, ClientsModule],
  providers: [OidcService, KeyStoreService, SigningKeysRepository, OidcPayloadsRepository, ClientRegistry],
  exports: [OidcService, KeyStoreService, ClientRegistry],
})
export class OidcModule {}
