import { runMigrations as applyMigrations } from '@collect/platform';
import type { DataSourceOptions } from 'typeorm';
import type { CasConfig } from '../config/cas-config.js';
import { migrations } from '../migrations/index.js';
import { entities } from './entities.js';

/** Distinct from collect-api's, so both services may share one database if an operator wants. */
export const MIGRATIONS_TABLE = 'cas_migrations';

type DbConfig = Pick<CasConfig, 'CAS_DATABASE_URL' | 'CAS_DATABASE_POOL_SIZE'>;

export function dataSourceOptions(config: DbConfig): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.CAS_DATABASE_URL,
    entities,
    migrations,
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: { max: config.CAS_DATABASE_POOL_SIZE },
  };
}

/** Applies pending migrations; a second call is a no-op. Returns the names applied. */
export function runMigrations(config: DbConfig): Promise<string[]> {
  return applyMigrations(dataSourceOptions(config));
}
