export * from './ports.js';
export * from './children.js';
export * from './cpu-time.js';
export * from './postgres.js';
export * from './redis.js';
export * from './service.js';
export * from './system-packages.js';
