import type { ReadinessCheck } from '@collect/platform';
import type { DataSource } from 'typeorm';

export function databaseCheck(ds: DataSource): ReadinessCheck {
  return { name: 'database', check: async () => void (await ds.query('SELECT 1')) };
}
