import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { HttpErrorFilter } from './http-exception.filter.js';
import { NulCharacterGuard } from './nul-guard.js';

export interface HttpAppOptions {
  title: string;
  description: string;
  /** Path of the OpenAPI UI; the JSON document is served at `${docsPath}-json`. */
  docsPath: string;
  version?: string;
  /** OAuth 2.0 endpoints whose early refusals answer in the RFC 6749 shape (see HttpErrorFilter). */
  oauthPaths?: string[];
}

/** What both services set on their Nest application: logger, error shape, OpenAPI. */
export function configureHttpApp(app: INestApplication, options: HttpAppOptions): void {
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new HttpErrorFilter({ oauthPaths: options.oauthPaths }));
  app.useGlobalGuards(new NulCharacterGuard());
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder().setTitle(options.title).setDescription(options.description).setVersion(options.version ?? '1.0').build(),
  );
  SwaggerModule.setup(options.docsPath, app, document, { jsonDocumentUrl: `${options.docsPath}-json` });
}

/**
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests and module shutdown
 * hooks finish, then exit 0. Nest's own shutdown hooks re-raise the signal (exit 143), which
 * Kubernetes and process managers read as a crash.
 */
export function installGracefulShutdown(app: INestApplication, graceMs: number, log: (msg: string) => void): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    log(`received ${signal}, draining`);
    const timer = setTimeout(() => {
      log(`shutdown took longer than ${graceMs} ms, exiting`);
      process.exit(1);
    }, graceMs);
    timer.unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
