import { AccountEntity } from '../accounts/account.entity.js';
import { ClientEntity } from '../clients/client.entity.js';
import { ResourceEntity } from '../clients/resource.entity.js';
import { OidcPayloadEntity } from '../oidc/oidc-payload.entity.js';
import { SigningKeyEntity } from '../oidc/signing-key.entity.js';

/** Every TypeORM entity of the CAS. Append new ones (one line each). */
export const entities = [AccountEntity, ResourceEntity, ClientEntity, OidcPayloadEntity, SigningKeyEntity];
