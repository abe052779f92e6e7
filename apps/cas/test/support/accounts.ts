import { AccountsService } from '../../src/accounts/accounts.service.js';
import type { TestCasApp } from '../test-app.js';

export function createUser(sut: TestCasApp, username: string, password: string, extra: { email?: string; enabled?: boolean } = {}) {
  return sut.app.get(AccountsService).create({ username, password, ...extra });
}
