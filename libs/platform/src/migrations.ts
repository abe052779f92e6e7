import { DataSource, type DataSourceOptions } from 'typeorm';

/**
 * Applies the pending migrations of `options` on a connection of its own (two pooled clients),
 * each in its own transaction; a second call is a no-op. Returns the names applied. Both services
 * call it at start (`MIGRATIONS_RUN`) and from their `migrate` entry.
 */
export async function runMigrations(options: DataSourceOptions): Promise<string[]> {
  const ds = new DataSource({ ...options, extra: { max: 2 } } as DataSourceOptions);
  await ds.initialize();
  try {
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
