import { generateKeyPairSync } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import { ClientsService } from '../clients/clients.service.js';
import { KeyEncryption } from './key-encryption.js';
import type { SigningKeyEntity } from './signing-key.entity.js';
import { SigningKeysRepository, type SigningKeysTx } from './signing-keys.repository.js';

export const SIGNING_ALG = 'RS256';
/** Slack on top of the longest token lifetime before a retired key leaves the JWKS (clock skew, caches). */
const PUBLISH_MARGIN_SECONDS = 300;

export interface PublishedKeys {
  /** Private JWKs for oidc-provider, the signing key first. */
  jwks: { keys: JWK[] };
  /** Sorted kids: changes when the JWKS must change. */
  version: string;
}

/** Signing keys in PostgreSQL: created on first start, rotated by command or schedule. */
@Injectable()
export class KeyStoreService {
  private readonly logger = new Logger('keys');
  private readonly crypto: KeyEncryption;

  constructor(
    @Inject(CAS_CONFIG) private readonly config: CasConfig,
    private readonly repo: SigningKeysRepository,
    private readonly clients: ClientsService,
  ) {
    this.crypto = new KeyEncryption(config.CAS_KEY_ENCRYPTION_KEY, config.CAS_KEY_ENCRYPTION_KEY_PREVIOUS);
  }

  /** Makes sure one active key exists (first start). */
  async ensureActiveKey(): Promise<void> {
    await this.repo.withLock(async (tx) => {
      if (!(await tx.active())) await this.createKey(tx, 'first start');
    });
  }

  /**
   * A new key signs from now on; the previous one stays published until every token it signed
   * has expired. Returns the new kid.
   */
  async rotate(reason = 'command', now = new Date()): Promise<string> {
    const publishUntil = new Date(now.getTime() + (await this.longestTokenLifetimeSeconds()) * 1000);
    return this.repo.withLock(async (tx) => {
      const retired = await tx.retireAllActive(now, publishUntil);
      const kid = await this.createKey(tx, reason, retired);
      return kid;
    });
  }

  /** Rotates when the active key is older than CAS_KEY_ROTATION_DAYS; drops keys past their publish time. */
  async maintain(now = new Date()): Promise<void> {
    const maxAgeMs = this.config.CAS_KEY_ROTATION_DAYS * 86_400_000;
    const due = await this.repo.withLock(async (tx) => {
      const removed = await tx.deleteExpired(now);
      if (removed.length) this.logger.log({ event: 'key.removed', kids: removed });
      const active = await tx.active();
      return !active || now.getTime() - active.createdAt.getTime() >= maxAgeMs;
    });
    if (due) await this.rotate('schedule', now);
  }

  async published(now = new Date()): Promise<PublishedKeys> {
    const rows = await this.repo.published(now);
    const keys = rows.map((row) => this.privateJwk(row));
    return { jwks: { keys }, version: rows.map((r) => r.kid).sort().join(',') };
  }

  /**
   * Seals every stored private key under the current CAS_KEY_ENCRYPTION_KEY (those still under
   * CAS_KEY_ENCRYPTION_KEY_PREVIOUS); returns the kids rewritten and those already current.
   */
  async reencrypt(): Promise<{ reencrypted: string[]; current: string[] }> {
    return this.repo.withLock(async (tx) => {
      const result = { reencrypted: [] as string[], current: [] as string[] };
      for (const row of await tx.all()) {
        if (this.crypto.isCurrent(row.privateKeyEnc)) {
          result.current.push(row.kid);
          continue;
        }
        await tx.setPrivateKey(row.kid, this.crypto.encrypt(this.crypto.decrypt(row.privateKeyEnc)));
        result.reencrypted.push(row.kid);
      }
      if (result.reencrypted.length) this.logger.log({ event: 'key.reencrypted', kids: result.reencrypted });
      return result;
    });
  }

  list(): Promise<SigningKeyEntity[]> {
    return this.repo.all();
  }

  private privateJwk(row: SigningKeyEntity): JWK {
    const jwk = JSON.parse(this.crypto.decrypt(row.privateKeyEnc)) as JWK;
    return { ...jwk, kid: row.kid, alg: row.alg, use: 'sig' };
  }

  private async createKey(tx: SigningKeysTx, reason: string, retired: string[] = []): Promise<string> {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
    const kid = await calculateJwkThumbprint(publicJwk);
    await tx.insert({
      kid,
      alg: SIGNING_ALG,
      publicJwk: { kty: publicJwk.kty!, n: publicJwk.n!, e: publicJwk.e! },
      privateKeyEnc: this.crypto.encrypt(JSON.stringify(privateKey.export({ format: 'jwk' }))),
    });
    this.logger.log({ event: retired.length ? 'key.rotated' : 'key.created', kid, retired, reason });
    return kid;
  }

  /** Access tokens (global or per resource), ID tokens: whichever lives longest. */
  private async longestTokenLifetimeSeconds(): Promise<number> {
    const resources = await this.clients.allResources();
    const ttls = [this.config.CAS_ACCESS_TOKEN_TTL, this.config.CAS_ID_TOKEN_TTL, ...resources.map((r) => r.accessTokenTtl ?? 0)];
    return Math.max(...ttls) + PUBLISH_MARGIN_SECONDS;
  }
}
