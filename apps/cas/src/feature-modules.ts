import type { DynamicModule, Type } from '@nestjs/common';
import { AccountsModule } from './accounts/accounts.module.js';
import { ClientsModule } from './clients/clients.module.js';
import { CasApiModule } from './cas-api/cas-api.module.js';
import { OidcModule } from './oidc/oidc.module.js';
import { InteractionsModule } from './interactions/interactions.module.js';

/** The feature modules of the CAS, one per folder. Append new ones (one line each). */
export const featureModules: Array<Type | DynamicModule> = [AccountsModule, ClientsModule, CasApiModule, OidcModule, InteractionsModule];
