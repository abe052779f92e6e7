import { undocumentedVariables } from '@collect/testing';
import { collectEnvSchema } from './collect-config.js';

describe('collect-api configuration documentation', () => {
  it('lists every variable the service reads in docs/configuration.md', () => {
    expect(undocumentedVariables(collectEnvSchema)).toEqual([]);
  });
});
