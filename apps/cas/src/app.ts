import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { configureHttpApp } from '@collect/contracts';
import { AppModule } from './app.module.js';
import type { CasConfig } from './config/cas-config.js';
import { runMigrations } from './database/data-source.js';
import { mountOidcProvider } from './oidc/mount.js';

/** Builds the HTTP application (not listening). Tests and main.ts both start here. */
export async function createCasApp(config: CasConfig): Promise<NestExpressApplication> {
  if (config.MIGRATIONS_RUN) await runMigrations(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { bufferLogs: true });
  app.disable('x-powered-by');
  // Behind an ingress the client address (lockout) and https come from X-Forwarded-*.
  if (config.CAS_TRUST_PROXY) app.set('trust proxy', true);
  mountOidcProvider(app);
  configureHttpApp(app, {
    title: 'cas',
    description: 'Central authentication service (OpenID Connect / OAuth 2.0) and its user-search API.',
    docsPath: 'docs',
  });
  return app;
}
