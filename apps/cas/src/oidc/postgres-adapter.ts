import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { OidcPayloadsRepository, StoredPayload } from './oidc-payloads.repository.js';

/** Looks up clients in the CAS registry (cas_clients), not in oidc_payloads. */
export interface ClientMetadataSource {
  find(clientId: string): Promise<AdapterPayload | undefined>;
}

/**
 * oidc-provider's adapter contract on PostgreSQL: one row per model instance, expiry in
 * `expires_at` (rows past it are invisible at once and deleted by the periodic clean-up),
 * `consumed_at` for single-use codes and rotated refresh tokens.
 */
export function postgresAdapterFactory(repo: OidcPayloadsRepository, clients: ClientMetadataSource) {
  return (model: string): Adapter => (model === 'Client' ? new ClientAdapter(clients) : new PostgresAdapter(model, repo));
}

class PostgresAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly repo: OidcPayloadsRepository,
  ) {}

  upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    return this.repo.upsert(this.model, id, payload as Record<string, unknown>, expiresIn || undefined);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!storable(id)) return undefined;
    return toPayload(await this.repo.find(this.model, id));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!storable(uid)) return undefined;
    return toPayload(await this.repo.findBy(this.model, 'uid', uid));
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (!storable(userCode)) return undefined;
    return toPayload(await this.repo.findBy(this.model, 'user_code', userCode));
  }

  /**
   * oidc-provider finds a code or refresh token, checks `consumed`, then calls consume() and
   * issues tokens: two concurrent redemptions both passed the check. Here consume is one
   * conditional UPDATE; the redemption that did not change the row is refused (invalid_grant,
   * before any token is issued) and, as for a code presented twice (RFC 6749 §4.1.2), the grant
   * is revoked (docs/security.md "Atomic check-then-act").
   */
  async consume(id: string): Promise<void> {
    if (!storable(id)) return;
    const { consumed, grantId } = await this.repo.consume(this.model, id);
    if (consumed) return;
    if (grantId) await this.repo.revokeByGrantId(grantId);
    throw new errors.InvalidGrant(this.model === 'RefreshToken' ? 'refresh token already used' : 'authorization code already consumed');
  }

  async destroy(id: string): Promise<void> {
    if (storable(id)) await this.repo.destroy(this.model, id);
  }

  revokeByGrantId(grantId: string): Promise<void> {
    return this.repo.revokeByGrantId(grantId);
  }
}

/** Clients are managed by the registry (seed, CLI); oidc-provider only reads them. */
class ClientAdapter implements Adapter {
  constructor(private readonly clients: ClientMetadataSource) {}
  async find(id: string) {
    return storable(id) ? this.clients.find(id) : undefined;
  }
  async upsert(): Promise<void> {
    throw new Error('clients are managed through the CAS registry');
  }
  async findByUid() {
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(): Promise<void> {}
  async destroy(): Promise<void> {}
  async revokeByGrantId(): Promise<void> {}
}

/**
 * PostgreSQL text cannot hold NUL: a token, uid or client_id carrying one (any caller can send
 * it to /connect/introspect or /connect/token) made the query fail and the provider answer 500
 * (found by fuzzing). No stored value has one, so it is simply not found.
 */
export function storable(value: string): boolean {
  return typeof value === 'string' && !value.includes('\u0000');
}

function toPayload(row: StoredPayload | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  const payload = row.payload as AdapterPayload;
  return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
}
