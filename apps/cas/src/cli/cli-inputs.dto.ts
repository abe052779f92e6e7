import { Check, Choice, Int, Text, TextList } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';
import {
  AUTH_METHODS, NAME_MESSAGE, NAME_PATTERN, SCOPE_MESSAGE, SCOPE_PATTERN, SUPPORTED_GRANT_TYPES, SUPPORTED_RESPONSE_TYPES,
} from '../clients/seed-format.js';

/**
 * The inputs of the admin CLI's commands, checked by the services' shared validation
 * (`validateInput`, the ValidationPipe of both HTTP apps) before a command touches the database.
 * Fields are the seed document's names (docs/cas.md, "Admin CLI"); the CLI reads them from its
 * `--kebab-case` options (CLI_OPTIONS). The client rules that tie several fields together stay in
 * the seed format, which the clients service applies to the CLI and the seed file alike.
 */

/** The longest password the login page passes on (interactions.service.ts): a longer one could never sign in. */
export const MAX_PASSWORD_LENGTH = 1024;

const required = { required: true, blank: 'refuse' } as const;

@RejectUnknownFields()
export class UsernameInput {
  @Text({ ...required, max: 150 })
  username!: string;
}

@RejectUnknownFields()
export class UserPasswordInput extends UsernameInput {
  @Text({ ...required, max: MAX_PASSWORD_LENGTH })
  password!: string;
}

@RejectUnknownFields()
export class UserCreateInput extends UserPasswordInput {
  @Text({ max: 254 })
  email?: string;

  @Text({ max: 150 })
  given_name?: string;

  @Text({ max: 150 })
  family_name?: string;
}

@RejectUnknownFields()
export class ResourceCreateInput {
  @Text({ ...required, pattern: NAME_PATTERN, patternMessage: NAME_MESSAGE })
  name!: string;

  @TextList({ pattern: SCOPE_PATTERN, patternMessage: SCOPE_MESSAGE })
  scopes?: string[];

  @Int({ min: 60, max: 86_400, description: 'Seconds.' })
  access_token_ttl?: number;
}

@RejectUnknownFields()
export class ClientIdInput {
  @Text({ ...required, pattern: NAME_PATTERN, patternMessage: NAME_MESSAGE })
  client_id!: string;
}

const oneOf = (choices: readonly string[]) =>
  Check((value) => Array.isArray(value) && value.every((v) => choices.includes(v as string)), { message: `Each item must be one of: ${choices.join(', ')}.` });

@RejectUnknownFields()
export class ClientCreateInput extends ClientIdInput {
  @TextList({ required: true, minItems: 1 })
  @oneOf(SUPPORTED_GRANT_TYPES)
  grant_types!: string[];

  @TextList()
  @oneOf(SUPPORTED_RESPONSE_TYPES)
  response_types?: string[];

  @TextList({ pattern: SCOPE_PATTERN, patternMessage: SCOPE_MESSAGE })
  scopes?: string[];

  @TextList({ pattern: NAME_PATTERN, patternMessage: NAME_MESSAGE })
  resources?: string[];

  @TextList({ maxLength: 2000 })
  redirect_uris?: string[];

  @TextList({ maxLength: 2000 })
  post_logout_redirect_uris?: string[];

  @Choice(AUTH_METHODS)
  token_endpoint_auth_method?: string;
}

/** The CLI option of each input field (`--client-id` → client_id). */
export const CLI_OPTIONS: Readonly<Record<string, string>> = {
  username: 'username', password: 'password', email: 'email', given_name: 'given-name', family_name: 'family-name',
  name: 'name', scopes: 'scopes', access_token_ttl: 'access-token-ttl', client_id: 'client-id', grant_types: 'grant-types',
  response_types: 'response-types', resources: 'resources', redirect_uris: 'redirect-uris', post_logout_redirect_uris: 'post-logout-redirect-uris',
  token_endpoint_auth_method: 'auth-method',
};
