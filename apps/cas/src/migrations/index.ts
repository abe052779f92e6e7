import { Accounts1763800000000 } from './1763800000000-accounts.js';

/** Every migration, in order. Append new ones at the end (one line each). */
export const migrations = [Accounts1763800000000];
