import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type Provider from 'oidc-provider';
import { AccountsService } from '../accounts/accounts.service.js';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import { ClientsService } from '../clients/clients.service.js';
import { ClientRegistry } from './client-registry.js';
import { KeyStoreService } from './key-store.service.js';
import { OidcPayloadsRepository } from './oidc-payloads.repository.js';
import { buildProvider } from './provider-factory.js';
import { TokenAuditLog } from './token-audit-log.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Owns the oidc-provider instance. Its key set and scope list are fixed at construction, so when
 * keys rotate or resources change (here or from the CLI in another process) a new provider is
 * built; all state lives in PostgreSQL, so the swap loses nothing.
 */
@Injectable()
export class OidcService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('oidc');
  private current?: { provider: Provider; handler: Handler; version: string };
  private timer?: NodeJS.Timeout;
  private maintaining = false;
  private readonly tokenAudit: TokenAuditLog;

  constructor(
    @Inject(CAS_CONFIG) private readonly config: CasConfig,
    private readonly keys: KeyStoreService,
    private readonly clients: ClientsService,
    private readonly registry: ClientRegistry,
    private readonly accounts: AccountsService,
    private readonly payloads: OidcPayloadsRepository,
  ) {
    this.tokenAudit = new TokenAuditLog(config.LOG_LEVEL);
  }

  /** Seeds ran in onModuleInit, so resources exist before the first provider is built. */
  async onApplicationBootstrap(): Promise<void> {
    await this.keys.ensureActiveKey();
    await this.keys.maintain();
    await this.reload();
    this.timer = setInterval(() => void this.tick(), this.config.CAS_KEY_CHECK_SECONDS * 1000);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.tokenAudit.flush();
  }

  get provider(): Provider {
    if (!this.current) throw new Error('the OpenID provider is not started yet');
    return this.current.provider;
  }

  /** Express/Node handler for the provider's routes. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    if (!this.current) {
      res.statusCode = 503;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ detail: 'Starting, try again shortly.' }));
      return;
    }
    this.current.handler(req, res);
  }

  /** Rebuilds the provider when the published keys or the resources changed. */
  async reload(force = false): Promise<boolean> {
    const [keys, resources, resourcesVersion] = await Promise.all([this.keys.published(), this.clients.allResources(), this.clients.resourcesVersion()]);
    const version = `${keys.version}|${resourcesVersion}`;
    if (!force && this.current?.version === version) return false;
    this.registry.clear();
    const provider = buildProvider({
      config: this.config,
      registry: this.registry,
      accounts: this.accounts,
      payloads: this.payloads,
      keys,
      resourceScopes: [...new Set(resources.flatMap((r) => r.scopes))],
      tokenAudit: this.tokenAudit,
    });
    this.current = { provider, handler: provider.callback() as Handler, version };
    this.logger.log({ event: 'provider.loaded', kids: keys.version.split(','), resources: resources.map((r) => r.name) });
    return true;
  }

  /** Forgets cached client/resource registrations (after an admin change in this process). */
  clearCaches(): void {
    this.registry.clear();
  }

  /** Periodic work: scheduled key rotation, pruning, expired rows, picking up outside changes. */
  async tick(): Promise<void> {
    if (this.maintaining) return;
    this.maintaining = true;
    try {
      await this.keys.maintain();
      await this.payloads.deleteExpired();
      await this.reload();
    } catch (err) {
      this.logger.error({ event: 'oidc.maintenance_failed', err: (err as Error).message });
    } finally {
      this.maintaining = false;
    }
  }
}
