import { Logger } from '@nestjs/common';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { CasConfig } from '../config/cas-config.js';
import { clientSecretMatches } from '../clients/client-secret.js';
import { OIDC_SCOPES } from '../clients/seed-format.js';
import { htmlPage, messagePage } from '@collect/platform';
import type { ClientRegistry } from './client-registry.js';
import type { OidcPayloadsRepository } from './oidc-payloads.repository.js';
import { postgresAdapterFactory } from './postgres-adapter.js';
import type { TokenAuditLog } from './token-audit-log.js';
import type { PublishedKeys } from './key-store.service.js';

/** Claim naming the grant an access token came from (only `client_credentials` is set). */
export const GRANT_TYPE_CLAIM = 'gty';

/** Resource indicators must be absolute URIs (RFC 8707); a resource named `x` is `urn:cas:resource:x`. */
export const RESOURCE_URN_PREFIX = 'urn:cas:resource:';
export const resourceIndicator = (name: string) => (URL.canParse(name) ? name : `${RESOURCE_URN_PREFIX}${name}`);
export const resourceName = (indicator: string) => (indicator.startsWith(RESOURCE_URN_PREFIX) ? indicator.slice(RESOURCE_URN_PREFIX.length) : indicator);

export const ROUTES = {
  authorization: '/connect/authorize',
  token: '/connect/token',
  userinfo: '/connect/userinfo',
  end_session: '/connect/endsession',
  revocation: '/connect/revocation',
  introspection: '/connect/introspect',
  pushed_authorization_request: '/connect/par',
  jwks: '/.well-known/openid-configuration/jwks',
} as const;

export interface ProviderDeps {
  config: CasConfig;
  registry: ClientRegistry;
  accounts: AccountsService;
  payloads: OidcPayloadsRepository;
  keys: PublishedKeys;
  /** Every scope some resource declares: oidc-provider only accepts known scopes in client metadata. */
  resourceScopes: string[];
  tokenAudit: TokenAuditLog;
}

const logger = new Logger('oidc');

export function buildProvider(deps: ProviderDeps): Provider {
  const { config, registry, accounts } = deps;

  /** The client's resource whose scopes cover the requested ones; else its first (the default audience). */
  async function defaultResource(ctx: KoaContextWithOIDC, client?: { clientId: string }, oneOf?: string[]) {
    if (oneOf?.length) return oneOf[0];
    const entity = client && (await registry.client(client.clientId));
    if (!entity?.resources.length) return undefined;
    const wanted = (ctx.oidc.params?.scope as string | undefined)?.split(' ').filter((s) => s && !(OIDC_SCOPES as readonly string[]).includes(s)) ?? [];
    for (const name of entity.resources) {
      const resource = await registry.resource(name);
      if (resource && wanted.every((s) => resource.scopes.includes(s))) return resourceIndicator(name);
    }
    return resourceIndicator(entity.resources[0]);
  }

  async function getResourceServerInfo(ctx: KoaContextWithOIDC, indicator: string, client: { clientId: string }) {
    const name = resourceName(indicator);
    const [entity, resource] = await Promise.all([registry.client(client.clientId), registry.resource(name)]);
    if (!entity || !resource || !entity.resources.includes(name)) throw new errors.InvalidTarget(`resource ${name} is not available to this client`);
    const allowed = resource.scopes.filter((s) => entity.scopes.includes(s));
    const params = ctx.oidc.params as Record<string, string | undefined>;
    if (ctx.oidc.route === 'token' && params.grant_type === 'client_credentials' && !params.scope) {
      params.scope = allowed.join(' '); // no scope asked: every scope the client has on the resource
    }
    // oidc-provider drops scopes it does not know; the issue asks for a refusal instead.
    for (const scope of params.scope?.split(' ').filter(Boolean) ?? []) {
      const oidcScope = (OIDC_SCOPES as readonly string[]).includes(scope);
      if (oidcScope ? !entity.scopes.includes(scope) : !allowed.includes(scope)) {
        throw new errors.InvalidScope('requested scope is not allowed', scope);
      }
    }
    return {
      scope: allowed.join(' '),
      audience: name,
      accessTokenTTL: resource.accessTokenTtl ?? config.CAS_ACCESS_TOKEN_TTL,
      accessTokenFormat: 'jwt' as const,
      jwt: { sign: { alg: 'RS256' as const } },
    };
  }

  const configuration: Configuration = {
    adapter: postgresAdapterFactory(deps.payloads, registry),
    jwks: deps.keys.jwks as Configuration['jwks'],
    cookies: { keys: config.CAS_COOKIE_KEYS },
    routes: ROUTES,
    scopes: [...OIDC_SCOPES, ...deps.resourceScopes],
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    // Userinfo cannot read resource-bound JWT access tokens, so the ID token carries the claims.
    conformIdTokenClaims: false,
    responseTypes: ['code', 'id_token token', 'id_token'],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: { required: () => true },
    rotateRefreshToken: true,
    // Says which grant issued an access token, so a resource can accept only machine tokens
    // (cas-api: spec 5.3, on-boarding authenticates with client credentials). oidc-provider
    // writes its own claims after these, so `gty` cannot displace `sub`, `client_id` or `aud`.
    extraTokenClaims: async (_ctx, token) => (token.kind === 'ClientCredentials' ? { [GRANT_TYPE_CLAIM]: 'client_credentials' } : undefined),
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && ['AuthorizationCode', 'RefreshToken'].includes(code.kind),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // A client learns about its own tokens only: by default any confidential client could
      // introspect every other client's refresh tokens (docs/security.md).
      introspection: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.body = htmlPage('Sign out', `<h1>Sign out?</h1>${form}<button form="op.logoutForm" type="submit" value="yes" name="logout">Sign out</button>`);
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.body = htmlPage('Signed out', '<h1>Signed out</h1><p>You are signed out.</p>');
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: defaultResource as never,
        getResourceServerInfo: getResourceServerInfo as never,
        useGrantedResource: async () => true,
      },
    },
    ttl: {
      AuthorizationCode: 60,
      IdToken: config.CAS_ID_TOKEN_TTL,
      AccessToken: config.CAS_ACCESS_TOKEN_TTL,
      ClientCredentials: config.CAS_ACCESS_TOKEN_TTL,
      RefreshToken: config.CAS_REFRESH_TOKEN_TTL,
      Session: config.CAS_SESSION_TTL,
      Grant: config.CAS_REFRESH_TOKEN_TTL,
      Interaction: 3600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => {
      const account = await accounts.findById(sub);
      if (!account || !account.enabled) return undefined;
      return {
        accountId: account.id,
        claims: async () => ({
          sub: account.id,
          preferred_username: account.username,
          name: [account.givenName, account.familyName].filter(Boolean).join(' ') || account.username,
          given_name: account.givenName || undefined,
          family_name: account.familyName || undefined,
          email: account.email || undefined,
          email_verified: false,
        }),
      };
    },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = messagePage('Sign-in failed', `${out.error}: ${out.error_description ?? ''}`);
    },
  };

  const provider = new Provider(deps.config.CAS_ISSUER, configuration);
  provider.proxy = config.CAS_TRUSTED_PROXY_HOPS > 0;
  // koa reads the client address from the right of X-Forwarded-For, as many entries as proxies we trust.
  provider.maxIpsCount = config.CAS_TRUSTED_PROXY_HOPS;
  // Client secrets are stored as a SHA-256 hash (see client-secret.ts): compare the hash.
  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientSecret?: string }, actual: string) {
    return clientSecretMatches(this.clientSecret, actual);
  } as never;
  if (config.NODE_ENV !== 'production') allowHttpImplicitRedirects(provider);
  provider.use(unauthorizedClientError);
  auditEvents(provider, deps.tokenAudit);
  return provider;
}

/**
 * Outside production the implicit dev client calls back to http://localhost; oidc-provider's
 * documented hook for relaxing exactly these two checks is Client.Schema#invalidate's code.
 */
function allowHttpImplicitRedirects(provider: Provider): void {
  const schema = (provider.Client as unknown as { Schema: { prototype: { invalidate(message: string, code?: string): void } } }).Schema;
  const original = schema.prototype.invalidate;
  schema.prototype.invalidate = function invalidate(message: string, code?: string) {
    if (code === 'implicit-force-https' || code === 'implicit-forbid-localhost') return;
    original.call(this, message, code);
  };
}

/**
 * RFC 6749 §5.2 names a grant type the client may not use `unauthorized_client`; oidc-provider
 * answers `invalid_request` with this description, so the code is corrected here.
 */
async function unauthorizedClientError(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  await next();
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (ctx.status === 400 && body?.error === 'invalid_request' && body.error_description === 'requested grant type is not allowed for this client') {
    body.error = 'unauthorized_client';
  }
}

/** Structured audit log lines; never the token values themselves. */
function auditEvents(provider: Provider, tokenAudit: TokenAuditLog): void {
  const issued = (token: { clientId?: string; accountId?: string; scope?: string; kind?: string; resourceServer?: { audience?: string } }) =>
    tokenAudit.issued({ kind: token.kind, client_id: token.clientId, sub: token.accountId, aud: token.resourceServer?.audience, scope: token.scope });
  provider.on('access_token.issued', issued);
  provider.on('client_credentials.issued', issued);
  provider.on('grant.error', (ctx: KoaContextWithOIDC, err: { error?: string; error_description?: string }) =>
    logger.warn({ event: 'token.refused', client_id: ctx.oidc?.client?.clientId, grant_type: ctx.oidc?.params?.grant_type, error: err.error, error_description: err.error_description }),
  );
  provider.on('grant.revoked', (_ctx: unknown, grantId: string) => logger.log({ event: 'grant.revoked', grant_id: grantId }));
  provider.on('server_error', (_ctx: unknown, err: Error) => logger.error({ event: 'oidc.server_error', err: err.message, stack: err.stack }));
}
