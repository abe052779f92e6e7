export * from './errors.js';
export * from './options.js';
export * from './scopes.js';
export * from './key-source.js';
export * from './validator.js';
export * from './nest.js';
