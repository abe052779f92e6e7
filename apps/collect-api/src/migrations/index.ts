import { Users1763800000000 } from './1763800000000-users.js';
import { AuthTokens1763900000000 } from './1763900000000-auth-tokens.js';
import { OAuth21763900000001 } from './1763900000001-oauth2.js';
import { Forms1764000000000 } from './1764000000000-forms.js';
import { FormCountersOnRead1764000000001 } from './1764000000001-form-counters-on-read.js';
import { RestServices1764100000000 } from './1764100000000-restservices.js';
import { RestServicesSheets1764100000001 } from './1764100000001-restservices-sheets.js';
import { Media1764200000000 } from './1764200000000-media.js';
import { CasIntegration1764300000000 } from './1764300000000-cas-integration.js';
import { DeliveryLogRetention1764500000000 } from './1764500000000-delivery-log-retention.js';
import { CredentialsReset1764600000000 } from './1764600000000-credentials-reset.js';
import { SubmissionRouting1764600000001 } from './1764600000001-submission-routing.js';
import { DeliveryEvents1764720000000 } from './1764720000000-delivery-events.js';

/** Every migration, in order. Append new ones at the end (one line each). */
export const migrations = [Users1763800000000, AuthTokens1763900000000, OAuth21763900000001];
migrations.push(Forms1764000000000);
migrations.push(FormCountersOnRead1764000000001);
migrations.push(RestServices1764100000000, RestServicesSheets1764100000001);
migrations.push(Media1764200000000);
migrations.push(CasIntegration1764300000000);
migrations.push(DeliveryLogRetention1764500000000);
migrations.push(CredentialsReset1764600000000, SubmissionRouting1764600000001);
migrations.push(DeliveryEvents1764720000000);
