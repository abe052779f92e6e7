import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AccountsService } from '../accounts/accounts.service.js';
import { CAS_CONFIG, type CasConfig } from '../config/cas-config.js';
import { ClientsService } from './clients.service.js';
import { parseSeed, SeedError, type Seed } from './seed-format.js';

/** The dev seed's browser client; pnpm start registers collect-api's real callback for it. */
export const COLLECT_WEB_CLIENT_ID = 'collect-web';

/**
 * Applies the seed files at start, like a realm import: resources, then clients, then users,
 * each upserted by its natural key, so applying the same file twice changes nothing.
 */
@Injectable()
export class SeedService implements OnModuleInit {
  private readonly logger = new Logger('seed');

  constructor(
    @Inject(CAS_CONFIG) private readonly config: CasConfig,
    private readonly clients: ClientsService,
    private readonly accounts: AccountsService,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.CAS_DEV_SEED_FILE) {
      const seed = await this.readSeed(this.config.CAS_DEV_SEED_FILE);
      await this.apply(this.withDevRedirect(seed), this.config.CAS_DEV_SEED_FILE);
    }
    if (this.config.CAS_SEED_FILE) await this.apply(await this.readSeed(this.config.CAS_SEED_FILE), this.config.CAS_SEED_FILE);
  }

  async readSeed(path: string): Promise<Seed> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new SeedError(`${path}: cannot read seed file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new SeedError(`${path}: not JSON (${(err as Error).message})`);
    }
    return parseSeed(raw, path);
  }

  async apply(seed: Seed, source = 'seed'): Promise<void> {
    for (const resource of seed.resources) await this.clients.upsertResource(resource);
    for (const client of seed.clients) await this.clients.upsertClient(client);
    for (const user of seed.users) await this.accounts.upsert(user);
    this.logger.log({ event: 'seed.applied', source, resources: seed.resources.length, clients: seed.clients.length, users: seed.users.length });
  }

  /** collect-api's callback depends on the port it was started on: the launcher passes it in. */
  private withDevRedirect(seed: Seed): Seed {
    const uri = this.config.CAS_DEV_COLLECT_WEB_REDIRECT_URI;
    if (!uri) return seed;
    return {
      ...seed,
      clients: seed.clients.map((c) =>
        c.client_id === COLLECT_WEB_CLIENT_ID ? { ...c, redirect_uris: [uri], post_logout_redirect_uris: [`${new URL(uri).origin}/`] } : c,
      ),
    };
  }
}
