import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { applyHttpServerLimits, configureHttpApp, startupLogger } from '@collect/platform';
import { AppModule } from './app.module.js';
import type { CasConfig } from './config/cas-config.js';
import { runMigrations } from './database/data-source.js';
import { mountOidcProvider } from './oidc/mount.js';
import { CAS_DOCS } from './openapi-document.js';
import { installCasHttpGuards } from './rate-limit/http-guards.js';

/** Builds the HTTP application (not listening). Tests and main.ts both start here. */
export async function createCasApp(config: CasConfig): Promise<NestExpressApplication> {
  if (config.MIGRATIONS_RUN) await runMigrations(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { logger: startupLogger('cas', config.LOG_LEVEL) });
  app.disable('x-powered-by');
  // Behind an ingress the client address (lockout) and https come from X-Forwarded-*, as
  // written by the CAS_TRUSTED_PROXY_HOPS proxies in front, never by the client (docs/security.md).
  app.set('trust proxy', config.CAS_TRUSTED_PROXY_HOPS);
  applyHttpServerLimits(app, {
    bodyLimitBytes: config.HTTP_BODY_LIMIT_BYTES,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  });
  mountOidcProvider(app);
  // Security headers and rate limits in front of both oidc-provider and Nest.
  installCasHttpGuards(app, config);
  configureHttpApp(app, { ...CAS_DOCS, docsPath: 'docs' });
  return app;
}
