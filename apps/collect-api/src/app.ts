import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { applyHttpServerLimits, configureHttpApp, securityHeaders, startupLogger } from '@collect/platform';
import { AppModule } from './app.module.js';
import type { CollectConfig } from './config/collect-config.js';
import { runMigrations } from './data-source.js';
import { COLLECT_API_DOCS } from './openapi-document.js';

/**
 * Builds the HTTP application (not listening). Tests and main.ts both start here; `worker: true`
 * composes the worker's background modules into it (one-process tests), see worker.module.ts.
 */
export async function createCollectApp(config: CollectConfig, options: { worker?: boolean } = {}): Promise<NestExpressApplication> {
  if (config.MIGRATIONS_RUN) await runMigrations(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options), { logger: startupLogger('collect-api', config.LOG_LEVEL), bodyParser: true });
  // The client address (rate limits) is the X-Forwarded-For entry written by the N-th trusted
  // proxy from us, never one the client wrote itself (docs/security.md, "Client addresses").
  app.set('trust proxy', config.HTTP_TRUSTED_PROXY_HOPS);
  app.disable('x-powered-by');
  app.use(securityHeaders(helmet));
  applyHttpServerLimits(app, {
    bodyLimitBytes: config.HTTP_BODY_LIMIT_BYTES,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  });
  configureHttpApp(app, { ...COLLECT_API_DOCS, docsPath: 'api/docs', oauthPaths: ['/o/token'] });
  return app;
}
