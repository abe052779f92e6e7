export * from './services.js';
export * from './managed-service.js';
