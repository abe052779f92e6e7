import { z } from 'zod';

/** OIDC scopes every user-facing client may ask for besides its resources' scopes. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export const SUPPORTED_GRANT_TYPES = ['authorization_code', 'implicit', 'client_credentials', 'refresh_token'] as const;
export const SUPPORTED_RESPONSE_TYPES = ['code', 'id_token token', 'id_token'] as const;

/** A resource or client name; the CLI's inputs (cli/cli-inputs.dto.ts) check the same. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
export const NAME_MESSAGE = 'letters, digits, . _ : - (max 200)';
/** A scope: printable ASCII without spaces, quotes or backslashes. */
export const SCOPE_PATTERN = /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/;
export const SCOPE_MESSAGE = 'a scope has no spaces or quotes';
export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

const name = z.string().regex(NAME_PATTERN, NAME_MESSAGE);
const scope = z.string().regex(SCOPE_PATTERN, SCOPE_MESSAGE);
const url = z.string().url('must be an absolute URL');

export const resourceSeedSchema = z.object({
  name,
  scopes: z.array(scope).default([]),
  access_token_ttl: z.number().int().min(60).max(86_400).nullable().optional(),
});

export const clientSeedSchema = z
  .object({
    client_id: name,
    client_secret: z.string().min(8).optional(),
    grant_types: z.array(z.enum(SUPPORTED_GRANT_TYPES)).min(1),
    response_types: z.array(z.enum(SUPPORTED_RESPONSE_TYPES)).default([]),
    scopes: z.array(scope).default([]),
    resources: z.array(name).default([]),
    redirect_uris: z.array(url).default([]),
    post_logout_redirect_uris: z.array(url).default([]),
    token_endpoint_auth_method: z.enum(AUTH_METHODS).default('client_secret_basic'),
    enabled: z.boolean().default(true),
  })
  .superRefine((c, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (c.token_endpoint_auth_method === 'none' && c.client_secret) problem('client_secret', 'a public client (token_endpoint_auth_method none) has no secret');
    const userFacing = c.grant_types.includes('authorization_code') || c.grant_types.includes('implicit');
    if (userFacing && c.redirect_uris.length === 0) problem('redirect_uris', 'needed for authorization_code / implicit');
    if (c.grant_types.includes('client_credentials') && c.token_endpoint_auth_method === 'none') problem('grant_types', 'client_credentials needs a confidential client');
    if (c.grant_types.includes('authorization_code') && !c.response_types.includes('code')) c.response_types.push('code');
    if (c.grant_types.includes('implicit') && !c.response_types.some((r) => r.startsWith('id_token'))) problem('response_types', 'implicit needs "id_token token"');
    if (c.grant_types.includes('refresh_token') && !c.grant_types.includes('authorization_code')) problem('grant_types', 'refresh_token is only for authorization_code clients');
  });

export const userSeedSchema = z.object({
  username: z.string().min(1).max(150),
  password: z.string().min(1).optional(),
  email: z.string().max(254).default(''),
  given_name: z.string().max(150).default(''),
  family_name: z.string().max(150).default(''),
  enabled: z.boolean().default(true),
});

export const seedSchema = z.object({
  resources: z.array(resourceSeedSchema).default([]),
  clients: z.array(clientSeedSchema).default([]),
  users: z.array(userSeedSchema).default([]),
});

export type ResourceSeed = z.infer<typeof resourceSeedSchema>;
export type ClientSeed = z.infer<typeof clientSeedSchema>;
export type UserSeed = z.infer<typeof userSeedSchema>;
export type Seed = z.infer<typeof seedSchema>;

export class SeedError extends Error {}

/** Parses a seed document; every problem is listed with its JSON path. */
export function parseSeed(raw: unknown, source: string): Seed {
  const result = seedSchema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new SeedError(`${source}: invalid seed\n  - ${lines.join('\n  - ')}`);
  }
  return result.data;
}
