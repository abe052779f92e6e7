export * from './errors.js';
export * from './http-errors.js';
export * from './http-exception.filter.js';
export * from './env.js';
export * from './logging.js';
export * from './health.js';
export * from './http-app.js';
export * from './logger-module.js';
