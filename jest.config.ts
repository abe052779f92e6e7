import { existsSync } from 'node:fs';
import type { Config } from 'jest';

const esmTs: Config['transform'] = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/../../tsconfig.jest.json' }],
};

const moduleNameMapper = {
  '^@collect/([a-z-]+)$': '<rootDir>/../../libs/$1/src/index.ts',
  '^(\\.{1,2}/.*)\\.js$': '$1',
};

function project(dir: string): Config {
  return {
    displayName: dir.split('/').pop(),
    rootDir: `<rootDir>/${dir}`,
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts'],
    transform: esmTs,
    moduleNameMapper,
    testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e.ts', '<rootDir>/test/**/*.spec.ts'],
  };
}

const config: Config = {
  globalSetup: '<rootDir>/jest.global-setup.mjs',
  globalTeardown: '<rootDir>/jest.global-teardown.mjs',
  testTimeout: 60_000,
  maxWorkers: 2,
  // A project folder may not exist yet on a fresh clone (git keeps no empty folders); pnpm test runs from the root.
  projects: ['apps/collect-api', 'apps/cas', 'libs/contracts', 'libs/jwt-validation', 'libs/testing', 'libs/runtime', 'k8s', 'bench']
    .filter((dir) => existsSync(dir))
    .map(project),
};

export default config;
