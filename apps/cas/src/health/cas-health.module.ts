import { HealthModule } from '@collect/platform';
import { DataSource } from 'typeorm';

export const CasHealthModule = HealthModule.register({
  inject: [DataSource],
  useFactory: ((ds: DataSource) => [{ name: 'database', check: async () => void (await ds.query('SELECT 1')) }]) as never,
});
