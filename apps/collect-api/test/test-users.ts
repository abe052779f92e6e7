import type { INestApplication } from '@nestjs/common';
import { OAuthApplicationsService } from '../src/oauth2/oauth-applications.service.js';
import { OAuth2Service } from '../src/oauth2/oauth2.service.js';
import { UserTokensService } from '../src/users/user-tokens.service.js';
import { UsersService } from '../src/users/users.service.js';

export interface TestUser {
  id: number;
  username: string;
  password: string;
  email: string;
  /** The user's API token (40 hex). */
  apiToken: string;
  /** Ready-made Authorization header values. */
  basic: string;
  token: string;
}

let counter = 0;

/**
 * Creates a user directly through the services (no HTTP) and returns its credentials, e.g.
 * `request(sut.url).get('/api/v1/user').set('Authorization', alice.token)`.
 * Username defaults to a unique `user<N>`; password to `<username>-password`.
 */
export async function createTestUser(
  app: INestApplication,
  options: { username?: string; password?: string; email?: string; superuser?: boolean; firstName?: string; lastName?: string } = {},
): Promise<TestUser> {
  const username = options.username ?? `user${process.pid}x${++counter}`;
  const password = options.password ?? `${username}-password`;
  const email = options.email ?? `${username}@example.org`;
  const user = await app.get(UsersService).create({
    username,
    password,
    email,
    isSuperuser: options.superuser ?? false,
    firstName: options.firstName,
    lastName: options.lastName,
  });
  const apiToken = await app.get(UserTokensService).apiToken(user.id);
  return {
    id: user.id,
    username,
    password,
    email,
    apiToken,
    basic: basicHeader(username, password),
    token: `Token ${apiToken}`,
  };
}

export function basicHeader(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * A Bearer access token of the local OAuth 2.0 provider for `user`, minted through the
 * provider's services (the browser flow itself is covered by oauth2.e2e.ts). Default scope
 * `read write groups`; pass `'read'` for a read-only token.
 */
export async function createTestBearerToken(app: INestApplication, user: { id: number }, scope = 'read write groups'): Promise<string> {
  const applications = app.get(OAuthApplicationsService);
  const oauth = app.get(OAuth2Service);
  const { app: client } = await applications.create(user.id, { name: 'test client', clientType: 'confidential', redirectUris: ['https://client.example/cb'] });
  const check = await oauth.checkAuthorizeRequest({ client_id: client.clientId, response_type: 'code', scope });
  if (check.kind !== 'ok') throw new Error(`authorize request refused: ${JSON.stringify(check)}`);
  const code = new URL(await oauth.approve(check.request, user.id)).searchParams.get('code')!;
  const tokens = await oauth.token(client, { grant_type: 'authorization_code', code });
  return `Bearer ${tokens.access_token}`;
}
