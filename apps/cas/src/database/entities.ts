import { AccountEntity } from '../accounts/account.entity.js';

/** Every TypeORM entity of the CAS. Append new ones (one line each). */
export const entities = [AccountEntity];
