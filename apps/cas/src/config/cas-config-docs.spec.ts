import { undocumentedVariables } from '@collect/testing';
import { casEnvSchema } from './cas-config.js';

describe('cas configuration documentation', () => {
  it('lists every variable the service reads in docs/configuration.md', () => {
    expect(undocumentedVariables(casEnvSchema)).toEqual([]);
  });
});
