export * from './ports.js';
export * from './children.js';
export * from './postgres.js';
export * from './redis.js';
export * from './service.js';
export * from './test-env.js';
export * from './fuzz/index.js';
export * from './secret-ledger.js';
