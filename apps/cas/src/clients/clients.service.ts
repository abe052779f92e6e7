import { Injectable, Logger } from '@nestjs/common';
import type { ClientEntity } from './client.entity.js';
import { generateClientSecret, hashClientSecret } from './client-secret.js';
import { ClientsRepository } from './clients.repository.js';
import type { ResourceEntity } from './resource.entity.js';
import { clientSeedSchema, OIDC_SCOPES, resourceSeedSchema, SeedError, type ClientSeed, type ResourceSeed } from './seed-format.js';

/** The client and resource registry: the rules a client's metadata must satisfy live here. */
@Injectable()
export class ClientsService {
  private readonly logger = new Logger('clients');

  constructor(private readonly repo: ClientsRepository) {}

  findClient(clientId: string): Promise<ClientEntity | null> {
    return this.repo.findClient(clientId);
  }

  findResource(name: string): Promise<ResourceEntity | null> {
    return this.repo.findResource(name);
  }

  allResources(): Promise<ResourceEntity[]> {
    return this.repo.allResources();
  }

  resourcesVersion(): Promise<string> {
    return this.repo.resourcesVersion();
  }

  async upsertResource(input: ResourceSeed): Promise<ResourceEntity> {
    const r = resourceSeedSchema.parse(input);
    const existing = await this.repo.findResource(r.name);
    const saved = await this.repo.saveResource({ ...(existing ?? {}), name: r.name, scopes: unique(r.scopes), accessTokenTtl: r.access_token_ttl ?? null });
    if (!existing) this.logger.log({ event: 'resource.created', resource: saved.name });
    return saved;
  }

  /**
   * Creates or updates a client. A confidential client given without a secret keeps its stored
   * secret, or gets a fresh one, returned here (the only time it is ever visible).
   */
  async upsertClient(input: ClientSeed): Promise<{ client: ClientEntity; generatedSecret?: string }> {
    const c = clientSeedSchema.parse(input);
    await this.checkResources(c);
    const existing = await this.repo.findClient(c.client_id);
    let secretHash = c.token_endpoint_auth_method === 'none' ? null : (existing?.secretHash ?? null);
    let generatedSecret: string | undefined;
    if (c.token_endpoint_auth_method !== 'none') {
      if (c.client_secret) secretHash = hashClientSecret(c.client_secret);
      else if (!secretHash) {
        generatedSecret = generateClientSecret();
        secretHash = hashClientSecret(generatedSecret);
      }
    }
    const client = await this.repo.saveClient({
      ...(existing ?? {}),
      clientId: c.client_id,
      secretHash,
      grantTypes: unique(c.grant_types),
      responseTypes: unique(c.response_types),
      scopes: unique(c.scopes),
      resources: unique(c.resources),
      redirectUris: unique(c.redirect_uris),
      postLogoutRedirectUris: unique(c.post_logout_redirect_uris),
      tokenEndpointAuthMethod: c.token_endpoint_auth_method,
      enabled: c.enabled,
    });
    if (!existing) this.logger.log({ event: 'client.created', client_id: client.clientId, grant_types: client.grantTypes });
    return { client, generatedSecret };
  }

  /** Creates a new client (refuses an existing id) and returns its secret once. */
  async createClient(input: ClientSeed): Promise<{ client: ClientEntity; secret?: string }> {
    if (await this.repo.findClient(input.client_id)) throw new SeedError(`client ${input.client_id} already exists`);
    const { client, generatedSecret } = await this.upsertClient(input);
    return { client, secret: generatedSecret ?? input.client_secret };
  }

  async setClientEnabled(clientId: string, enabled: boolean): Promise<void> {
    const client = await this.repo.findClient(clientId);
    if (!client) throw new SeedError(`no client ${clientId}`);
    await this.repo.saveClient({ ...client, enabled });
    this.logger.log({ event: enabled ? 'client.enabled' : 'client.disabled', client_id: clientId });
  }

  /** A client's resources must exist and its scopes must belong to them (or be OIDC scopes). */
  private async checkResources(c: ClientSeed): Promise<void> {
    const found = await this.repo.findResources(c.resources);
    const missing = c.resources.filter((name) => !found.some((r) => r.name === name));
    if (missing.length) throw new SeedError(`client ${c.client_id}: unknown resource(s) ${missing.join(', ')}`);
    const allowed = new Set<string>([...OIDC_SCOPES, ...found.flatMap((r) => r.scopes)]);
    const stray = c.scopes.filter((s) => !allowed.has(s));
    if (stray.length) throw new SeedError(`client ${c.client_id}: scope(s) ${stray.join(', ')} belong to none of its resources`);
    if (c.grant_types.includes('client_credentials') && c.resources.length === 0) {
      throw new SeedError(`client ${c.client_id}: client_credentials needs at least one resource (the token audience)`);
    }
  }
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}
