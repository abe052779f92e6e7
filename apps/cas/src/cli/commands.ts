import { parseArgs } from 'node:util';
import { HttpException, type INestApplicationContext, type Type } from '@nestjs/common';
import { validateInput } from '@collect/platform';
import { AccountsService } from '../accounts/accounts.service.js';
import { ClientsService } from '../clients/clients.service.js';
import type { ClientSeed } from '../clients/seed-format.js';
import { KeyStoreService } from '../oidc/key-store.service.js';
import {
  CLI_OPTIONS, ClientCreateInput, ClientIdInput, ResourceCreateInput, UserCreateInput, UsernameInput, UserPasswordInput,
} from './cli-inputs.dto.js';

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

/**
 * Options that hold lists, and how their items are separated on the command line: by spaces or
 * commas; a response type may hold a space (`id_token token`), so those by commas alone.
 */
const LIST_FIELDS = new Map<string, RegExp>([
  ['scopes', /[\s,]+/], ['grant_types', /[\s,]+/], ['response_types', /\s*,\s*/], ['resources', /[\s,]+/],
  ['redirect_uris', /[\s,]+/], ['post_logout_redirect_uris', /[\s,]+/],
]);
const FIELD_OF = new Map(Object.entries(CLI_OPTIONS).map(([field, option]) => [option, field]));

/**
 * The options given, as the input DTO `dto` of the command, checked by the services' shared
 * validation; a refusal names the options (`--password: This field is required.`).
 */
async function inputOf<T extends object>(dto: Type<T>, values: Record<string, string | undefined>): Promise<T> {
  const input: Record<string, unknown> = {};
  for (const [option, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const field = FIELD_OF.get(option) ?? option;
    const separator = LIST_FIELDS.get(field);
    input[field] = separator ? value.split(separator).filter(Boolean) : value;
  }
  try {
    return await validateInput(dto, input);
  } catch (err) {
    if (!(err instanceof HttpException)) throw err;
    const body = err.getResponse() as Record<string, unknown>;
    const problems = typeof body.detail === 'string' ? [body.detail] : Object.entries(body).map(([field, messages]) => `--${CLI_OPTIONS[field] ?? field}: ${[messages].flat().join(' ')}`);
    throw new UsageError(problems.join('; '));
  }
}

/** Runs one admin command; results are printed as one JSON line each. */
export async function runCommand(ctx: INestApplicationContext, argv: string[], out: Out): Promise<void> {
  const [group, action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: Object.fromEntries(Object.values(CLI_OPTIONS).map((option) => [option, { type: 'string' }] as const)),
  });
  const given = values as Record<string, string | undefined>;
  const accounts = () => ctx.get(AccountsService);
  const clients = () => ctx.get(ClientsService);

  switch (`${group} ${action}`) {
    case 'users create': {
      const user = await accounts().create(await inputOf(UserCreateInput, given));
      return out({ created: 'user', id: user.id, username: user.username });
    }
    case 'users set-password': {
      const { username, password } = await inputOf(UserPasswordInput, given);
      await accounts().setPassword(username, password);
      return out({ updated: 'user', username });
    }
    case 'users disable':
    case 'users enable': {
      const { username } = await inputOf(UsernameInput, given);
      await accounts().setEnabled(username, action === 'enable');
      return out({ updated: 'user', username, enabled: action === 'enable' });
    }
    case 'resources create': {
      const input = await inputOf(ResourceCreateInput, given);
      const resource = await clients().upsertResource({ name: input.name, scopes: input.scopes ?? [], access_token_ttl: input.access_token_ttl });
      return out({ saved: 'resource', name: resource.name, scopes: resource.scopes });
    }
    case 'clients create': {
      const input = await inputOf(ClientCreateInput, given);
      const { client, secret } = await clients().createClient({
        ...input,
        token_endpoint_auth_method: input.token_endpoint_auth_method ?? 'client_secret_basic',
      } as unknown as ClientSeed);
      // The only time the secret is shown: it is stored hashed.
      return out({ created: 'client', client_id: client.clientId, client_secret: secret ?? null });
    }
    case 'clients disable':
    case 'clients enable': {
      const { client_id: clientId } = await inputOf(ClientIdInput, given);
      await clients().setClientEnabled(clientId, action === 'enable');
      return out({ updated: 'client', client_id: clientId, enabled: action === 'enable' });
    }
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
