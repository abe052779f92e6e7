import { randomBytes } from 'node:crypto';
import { ensureDatabase } from '@collect/embedded';

/**
 * The Jest global setup starts one embedded PostgreSQL and one redis-server for the whole run
 * and publishes them through these variables; each test file then takes its own fresh database
 * (and its own Redis key prefix / db), so files run in parallel without sharing state.
 */
export const TEST_PG_ADMIN_URL = 'TEST_PG_ADMIN_URL';
export const TEST_REDIS_URL = 'TEST_REDIS_URL';

export function sharedPostgresAdminUrl(): string {
  const url = process.env[TEST_PG_ADMIN_URL];
  if (!url) throw new Error(`${TEST_PG_ADMIN_URL} is not set: run tests through the root jest config (pnpm test)`);
  return url;
}

export function sharedRedisUrl(): string {
  const url = process.env[TEST_REDIS_URL];
  if (!url) throw new Error(`${TEST_REDIS_URL} is not set: run tests through the root jest config (pnpm test)`);
  return url;
}

/** Creates an empty database with a unique name on the shared test server and returns its URL. */
export async function freshTestDatabase(prefix = 't'): Promise<string> {
  const admin = sharedPostgresAdminUrl();
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  await ensureDatabase(admin, name);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A unique Bull/Redis key prefix per test file. */
export function freshRedisPrefix(prefix = 't'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}
