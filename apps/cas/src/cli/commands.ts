import { parseArgs } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import { AccountsService } from '../accounts/accounts.service.js';
import { ClientsService } from '../clients/clients.service.js';
import type { ClientSeed } from '../clients/seed-format.js';
import { KeyStoreService } from '../oidc/key-store.service.js';

export const USAGE = `usage: cas <command> [options]

  users create --username U --password P [--email E] [--given-name G] [--family-name F]
  users set-password --username U --password P
  users disable --username U        users enable --username U
  resources create --name N --scopes "a b" [--access-token-ttl SECONDS]
  clients create --client-id ID --grant-types "client_credentials" [--scopes "a b"] [--resources "r1 r2"]
                 [--redirect-uris "https://app/cb"] [--post-logout-redirect-uris "..."]
                 [--response-types "code"] [--auth-method client_secret_basic|client_secret_post|none]
                 (prints the generated secret once)
  clients disable --client-id ID    clients enable --client-id ID
  keys rotate                       keys list
  keys reencrypt                    (after changing CAS_KEY_ENCRYPTION_KEY; old value in CAS_KEY_ENCRYPTION_KEY_PREVIOUS)
`;

export class UsageError extends Error {}

type Out = (line: Record<string, unknown>) => void;

const list = (v: string | undefined) => (v ?? '').split(/[\s,]+/).filter(Boolean);

/** Runs one admin command; results are printed as one JSON line each. */
export async function runCommand(ctx: INestApplicationContext, argv: string[], out: Out): Promise<void> {
  const [group, action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      username: { type: 'string' }, password: { type: 'string' }, email: { type: 'string' },
      'given-name': { type: 'string' }, 'family-name': { type: 'string' },
      name: { type: 'string' }, scopes: { type: 'string' }, 'access-token-ttl': { type: 'string' },
      'client-id': { type: 'string' }, 'grant-types': { type: 'string' }, 'response-types': { type: 'string' },
      resources: { type: 'string' }, 'redirect-uris': { type: 'string' }, 'post-logout-redirect-uris': { type: 'string' },
      'auth-method': { type: 'string' },
    },
  });
  const need = (key: keyof typeof values) => {
    const v = values[key];
    if (typeof v !== 'string' || !v) throw new UsageError(`--${key} is required`);
    return v;
  };
  const accounts = () => ctx.get(AccountsService);
  const clients = () => ctx.get(ClientsService);

  switch (`${group} ${action}`) {
    case 'users create': {
      const user = await accounts().create({
        username: need('username'), password: need('password'), email: values.email,
        given_name: values['given-name'], family_name: values['family-name'],
      });
      return out({ created: 'user', id: user.id, username: user.username });
    }
    case 'users set-password':
      await accounts().setPassword(need('username'), need('password'));
      return out({ updated: 'user', username: values.username });
    case 'users disable':
    case 'users enable':
      await accounts().setEnabled(need('username'), action === 'enable');
      return out({ updated: 'user', username: values.username, enabled: action === 'enable' });
    case 'resources create': {
      const ttl = values['access-token-ttl'] ? Number(values['access-token-ttl']) : undefined;
      const resource = await clients().upsertResource({ name: need('name'), scopes: list(values.scopes), access_token_ttl: ttl });
      return out({ saved: 'resource', name: resource.name, scopes: resource.scopes });
    }
    case 'clients create': {
      const input = {
        client_id: need('client-id'),
        grant_types: list(need('grant-types')),
        response_types: values['response-types'] !== undefined ? [values['response-types']] : [],
        scopes: list(values.scopes),
        resources: list(values.resources),
        redirect_uris: list(values['redirect-uris']),
        post_logout_redirect_uris: list(values['post-logout-redirect-uris']),
        token_endpoint_auth_method: values['auth-method'] ?? 'client_secret_basic',
      } as unknown as ClientSeed;
      const { client, secret } = await clients().createClient(input);
      // The only time the secret is shown: it is stored hashed.
      return out({ created: 'client', client_id: client.clientId, client_secret: secret ?? null });
    }
    case 'clients disable':
    case 'clients enable':
      await clients().setClientEnabled(need('client-id'), action === 'enable');
      return out({ updated: 'client', client_id: values['client-id'], enabled: action === 'enable' });
    case 'keys rotate': {
      const kid = await ctx.get(KeyStoreService).rotate('command');
      return out({ rotated: true, kid });
    }
    case 'keys reencrypt': {
      const { reencrypted, current } = await ctx.get(KeyStoreService).reencrypt();
      return out({ reencrypted, already_current: current });
    }
    case 'keys list': {
      for (const k of await ctx.get(KeyStoreService).list()) {
        out({ kid: k.kid, alg: k.alg, created_at: k.createdAt, retired_at: k.retiredAt, publish_until: k.publishUntil, signing: k.retiredAt === null });
      }
      return;
    }
    default:
      throw new UsageError(`unknown command: ${[group, action].filter(Boolean).join(' ') || '(none)'}`);
  }
}
