import { Accounts1763800000000 } from './1763800000000-accounts.js';
import { ClientsResources1763900000000 } from './1763900000000-clients-resources.js';
import { UserSearchIndexes1764000000000 } from './1764000000000-user-search-indexes.js';
import { Oidc1763900100000 } from './1763900100000-oidc.js';
import { RateLimits1764400000000 } from './1764400000000-rate-limits.js';
import { LoginAttempts1764600000000 } from './1764600000000-login-attempts.js';

/** Every migration, in order. Append new ones at the end (one line each). */
export const migrations = [Accounts1763800000000, ClientsResources1763900000000, UserSearchIndexes1764000000000, Oidc1763900100000];
migrations.push(RateLimits1764400000000);
migrations.push(LoginAttempts1764600000000);
