import { runMigrations as applyMigrations } from '@collect/platform';
import type { DataSourceOptions } from 'typeorm';
import type { CollectConfig } from './config/collect-config.js';
import { migrations } from './migrations/index.js';
import { entities } from './entities.js';

export const MIGRATIONS_TABLE = 'collect_migrations';

/**
 * `DATABASE_POOL_WAIT_MS` (when given): how long a query waits for a connection of the pool
 * before it fails, answered 503 (docs/api-conventions.md, "Errors") instead of a request that
 * waits for ever behind a pool every request of a load holds.
 */
export function dataSourceOptions(config: Pick<CollectConfig, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'> & Partial<Pick<CollectConfig, 'DATABASE_POOL_WAIT_MS'>>): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.DATABASE_URL,
    entities,
    migrations,
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: { max: config.DATABASE_POOL_SIZE, ...(config.DATABASE_POOL_WAIT_MS ? { connectionTimeoutMillis: config.DATABASE_POOL_WAIT_MS } : {}) },
  };
}

/** Applies pending migrations; a second call is a no-op. Returns the names applied. */
export function runMigrations(config: Pick<CollectConfig, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'>): Promise<string[]> {
  return applyMigrations(dataSourceOptions(config));
}
