import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { OidcService } from './oidc.service.js';

/** The provider's own paths: discovery, JWKS and everything under /connect/. */
export function isProviderPath(url: string | undefined): boolean {
  const path = url ?? '/';
  return path.startsWith('/connect/') || path.startsWith('/.well-known/');
}

/**
 * Sends the provider's paths straight to oidc-provider, ahead of Express and Nest: the token
 * endpoint is the hot path and gains nothing from Express's router, Nest's middleware or body
 * parsers (oidc-provider parses its own bodies). Everything else (health, docs, interaction
 * pages, cas-api) goes to the Nest application as usual.
 */
export function mountOidcProvider(app: NestExpressApplication): void {
  const oidc = app.get(OidcService);
  const server = app.getHttpServer() as Server;
  const nestHandlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (nestHandlers.length !== 1) throw new Error(`expected one request listener on the HTTP server, found ${nestHandlers.length}`);
  const [nest] = nestHandlers;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => (isProviderPath(req.url) ? oidc.handle(req, res) : nest(req, res)));
}
