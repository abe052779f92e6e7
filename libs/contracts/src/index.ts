export * from './errors.js';
export * from './http-errors.js';
export * from './cas-users.js';
export * from './dto-fields.js';
