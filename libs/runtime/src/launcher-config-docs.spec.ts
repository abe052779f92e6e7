import { envSchemaKeys, undocumentedVariables } from '@collect/testing';
import { launcherEnvSchema } from './launcher-config.js';

describe('pnpm start configuration documentation', () => {
  it('lists every variable the launcher reads in the "pnpm start" section of docs/configuration.md', () => {
    expect(envSchemaKeys(launcherEnvSchema)).toContain('COLLECT_PORT');
    expect(undocumentedVariables(launcherEnvSchema, '## pnpm start')).toEqual([]);
  });
});
