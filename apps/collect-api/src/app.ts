import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { configureHttpApp } from '@collect/contracts';
import { AppModule } from './app.module.js';
import type { CollectConfig } from './config/collect-config.js';
import { runMigrations } from './database/data-source.js';

/** Builds the HTTP application (not listening). Tests and main.ts both start here. */
export async function createCollectApp(config: CollectConfig): Promise<NestExpressApplication> {
  if (config.MIGRATIONS_RUN) await runMigrations(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { bufferLogs: true, bodyParser: true });
  app.set('trust proxy', false);
  app.disable('x-powered-by');
  configureHttpApp(app, {
    title: 'collect-api',
    description: 'Data-collection JSON API: forms, submissions, rest services, media.',
    docsPath: 'api/docs',
    oauthPaths: ['/o/token'],
  });
  return app;
}
