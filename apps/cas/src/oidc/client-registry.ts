import { Inject, Injectable } from '@nestjs/common';
import type { AdapterPayload } from 'oidc-provider';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import type { ClientEntity } from '../clients/client.entity.js';
import { ClientsService } from '../clients/clients.service.js';
import type { ResourceEntity } from '../clients/resource.entity.js';
import type { ClientMetadataSource } from './postgres-adapter.js';

/**
 * Clients and resources as oidc-provider sees them, cached for CAS_CLIENT_CACHE_SECONDS: the
 * client-credentials hot path then needs no database round trip. A disabled client stops
 * working within that time on every instance.
 */
@Injectable()
export class ClientRegistry implements ClientMetadataSource {
  private readonly clientCache = new Map<string, { at: number; value: ClientEntity | null }>();
  private readonly resourceCache = new Map<string, { at: number; value: ResourceEntity | null }>();

  constructor(
    @Inject(CAS_CONFIG) private readonly config: CasConfig,
    private readonly clients: ClientsService,
  ) {}

  async find(clientId: string): Promise<AdapterPayload | undefined> {
    const client = await this.client(clientId);
    return client && client.enabled ? toMetadata(client) : undefined;
  }

  client(clientId: string): Promise<ClientEntity | null> {
    return this.cached(this.clientCache, clientId, () => this.clients.findClient(clientId));
  }

  resource(name: string): Promise<ResourceEntity | null> {
    return this.cached(this.resourceCache, name, () => this.clients.findResource(name));
  }

  clear(): void {
    this.clientCache.clear();
    this.resourceCache.clear();
  }

  private async cached<T>(cache: Map<string, { at: number; value: T | null }>, key: string, load: () => Promise<T | null>): Promise<T | null> {
    const ttlMs = this.config.CAS_CLIENT_CACHE_SECONDS * 1000;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const value = await load();
    if (ttlMs > 0) {
      if (cache.size > 10_000) cache.clear(); // bounded: unknown ids must not grow memory forever
      cache.set(key, { at: Date.now(), value });
    }
    return value;
  }
}

/** The registry row as oidc-provider client metadata. */
export function toMetadata(c: ClientEntity): AdapterPayload {
  const metadata: AdapterPayload = {
    client_id: c.clientId,
    grant_types: c.grantTypes,
    response_types: c.responseTypes as AdapterPayload['response_types'],
    redirect_uris: c.redirectUris,
    post_logout_redirect_uris: c.postLogoutRedirectUris,
    token_endpoint_auth_method: c.tokenEndpointAuthMethod,
    scope: c.scopes.join(' '),
    id_token_signed_response_alg: 'RS256',
  };
  // oidc-provider keeps the "secret" we give it and compares through compareClientSecret,
  // which the provider factory points at the hash check.
  if (c.tokenEndpointAuthMethod !== 'none' && c.secretHash) metadata.client_secret = c.secretHash;
  return metadata;
}
