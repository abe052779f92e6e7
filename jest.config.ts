import { existsSync } from 'node:fs';
import type { Config } from 'jest';

// Paths from a project's rootDir back to the repository root: `apps/x` is two levels deep, `k8s` and `bench` one.
function toRoot(dir: string): string {
  return '../'.repeat(dir.split('/').length);
}

function esmTs(dir: string): Config['transform'] {
  return { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: `<rootDir>/${toRoot(dir)}tsconfig.jest.json` }] };
}

function moduleNameMapper(dir: string): Record<string, string> {
  return {
    '^@collect/([a-z-]+)$': `<rootDir>/${toRoot(dir)}libs/$1/src/index.ts`,
    '^(\\.{1,2}/.*)\\.js$': '$1',
  };
}

function project(dir: string): Config {
  return {
    displayName: dir.split('/').pop(),
    rootDir: `<rootDir>/${dir}`,
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts'],
    transform: esmTs(dir),
    moduleNameMapper: moduleNameMapper(dir),
    testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e.ts', '<rootDir>/test/**/*.spec.ts'],
  };
}

const config: Config = {
  globalSetup: '<rootDir>/jest.global-setup.mjs',
  globalTeardown: '<rootDir>/jest.global-teardown.mjs',
  testTimeout: 60_000,
  maxWorkers: 2,
  // A project folder may not exist yet on a fresh clone (git keeps no empty folders); pnpm test runs from the root.
  projects: ['apps/collect-api', 'apps/cas', 'libs/contracts', 'libs/platform', 'libs/jwt-validation', 'libs/embedded', 'libs/testing', 'libs/runtime', 'libs/xlsform', 'k8s', 'bench', 'tools']
    .filter((dir) => existsSync(dir))
    .map(project),
};

export default config;
