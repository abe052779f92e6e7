export * from './html-page.js';
export * from './migrations.js';
