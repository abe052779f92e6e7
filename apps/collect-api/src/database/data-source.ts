import { DataSource, type DataSourceOptions } from 'typeorm';
import type { CollectConfig } from '../config/collect-config.js';
import { migrations } from '../migrations/index.js';
import { entities } from './entities.js';

export const MIGRATIONS_TABLE = 'collect_migrations';

export function dataSourceOptions(config: Pick<CollectConfig, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'>): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.DATABASE_URL,
    entities,
    migrations,
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: { max: config.DATABASE_POOL_SIZE },
  };
}

/** Applies pending migrations; a second call is a no-op. Returns the names applied. */
export async function runMigrations(config: Pick<CollectConfig, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'>): Promise<string[]> {
  const ds = new DataSource({ ...dataSourceOptions(config), extra: { max: 2 } });
  await ds.initialize();
  try {
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
