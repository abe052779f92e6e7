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
  // A hang detector, not a speed check: the suite must pass on a busy machine (docs/operations.md, "Checks in CI").
  testTimeout: 180_000,
  maxWorkers: 2,
  // How long Jest waits for a worker to exit after its last test file before killing it and
  // printing "A worker process has failed to exit gracefully" (jest-worker's default: 500 ms).
  // Traced with a probe of every handle at the end of the run: at that point no handle, timer or thread of the tests is left and the
  // worker's 'exit' event fires within 1 ms, but Node's own teardown of a worker that ran
  // dozens of suites (0.8 to 1.5 GB of heap) takes longer than 500 ms on a loaded 2-core
  // machine. A real leaked handle still keeps a worker past 5 s and is still reported.
  workerGracefulExitTimeout: 5_000,
  // A project folder may not exist yet on a fresh clone (git keeps no empty folders); pnpm test runs from the root.
  projects: ['apps/collect-api', 'apps/cas', 'libs/contracts', 'libs/platform', 'libs/jwt-validation', 'libs/embedded', 'libs/testing', 'libs/runtime', 'libs/xlsform', 'k8s', 'bench', 'tools']
    .filter((dir) => existsSync(dir))
    .map(project),
};

export default config;
