export * from './arbitraries.js';
export * from './requests.js';
export * from './runner.js';
