export * from './config-docs.js';
// The embedded PostgreSQL and Redis and the child-process helpers live in @collect/embedded
// (pnpm start uses them too); tests reach them through this library as before.
export * from '@collect/embedded';
export * from './test-env.js';
export * from './fuzz/index.js';
export * from './secret-ledger.js';
export * from './mock-of.js';
export * from './complexity.js';
export * from './garbage.js';
export * from './pnpm.js';
export * from './zip-bomb.js';
