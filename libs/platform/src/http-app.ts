import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { HttpErrorFilter } from './http-exception.filter.js';
import { markNulFreeJson, NulCharacterGuard } from './nul-guard.js';
import { buildOpenApiDocument, type OpenApiInfo } from './openapi.js';
import { ApiValidationPipe } from './validation-pipe.js';

export interface HttpAppOptions extends OpenApiInfo {
  /** Path of the OpenAPI UI; the JSON document is served at `${docsPath}-json`. */
  docsPath: string;
  /** OAuth 2.0 endpoints whose early refusals answer in the RFC 6749 shape (see HttpErrorFilter). */
  oauthPaths?: string[];
}

export interface HttpServerLimits {
  /** Largest JSON or form-encoded body (413 `{"detail"}` beyond). */
  bodyLimitBytes: number;
  /** Time allowed to receive the request headers (slow-loris). */
  headersTimeoutMs: number;
  /** Time allowed to receive the whole request. */
  requestTimeoutMs: number;
  /** Idle time before a kept-alive connection is closed (above the load balancer's). */
  keepAliveTimeoutMs: number;
}

/**
 * Body size limits and slow-client timeouts. Called before listen(): Node reads
 * `connectionsCheckingInterval` when the server starts listening, and its default (30 s) would
 * let a slow-loris connection outlive `headersTimeout` by that much.
 */
export function applyHttpServerLimits(app: NestExpressApplication, limits: HttpServerLimits): void {
  // Nest's option type leaves `verify` out because its own rawBody option sets one; these
  // services do not use rawBody, so body-parser gets ours (nul-guard.ts, markNulFreeJson).
  const json = { limit: limits.bodyLimitBytes, verify: markNulFreeJson };
  app.useBodyParser('json', json);
  app.useBodyParser('urlencoded', { limit: limits.bodyLimitBytes, extended: true });
  const server = app.getHttpServer() as Server & { connectionsCheckingInterval?: number };
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.connectionsCheckingInterval = Math.min(5_000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4)));
}

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;
type HelmetFactory = (options: Record<string, unknown>) => Middleware;

/**
 * Helmet's headers on every answer (nosniff, frame and referrer policy, HSTS, COOP, ...), the
 * services' own (helmet is a dependency of the apps, passed in). No global CSP: the HTML pages
 * set a strict one of their own and Swagger UI needs its inline script. No CORP: media served
 * to web apps of other origins must stay loadable.
 */
export function securityHeaders(helmet: unknown): Middleware {
  return (helmet as HelmetFactory)({
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: false,
    crossOriginEmbedderPolicy: false,
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
  });
}

/** What both services set on their Nest application: logger, error shape, input validation, OpenAPI. */
export function configureHttpApp(app: INestApplication, options: HttpAppOptions): void {
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new HttpErrorFilter({ oauthPaths: options.oauthPaths }));
  app.useGlobalGuards(new NulCharacterGuard());
  app.useGlobalPipes(new ApiValidationPipe());
  // The same document `pnpm openapi` checks in under docs/openapi/ (buildOpenApiDocument).
  SwaggerModule.setup(options.docsPath, app, buildOpenApiDocument(app, options), { jsonDocumentUrl: `${options.docsPath}-json` });
}

/**
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests and module shutdown
 * hooks finish, then exit 0. Nest's own shutdown hooks re-raise the signal (exit 143), which
 * Kubernetes and process managers read as a crash.
 */
export function installGracefulShutdown(app: Pick<INestApplication, 'close'>, graceMs: number, log: (msg: string) => void): void {
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
