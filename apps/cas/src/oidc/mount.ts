import type { NestExpressApplication } from '@nestjs/platform-express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OidcService } from './oidc.service.js';

/**
 * Sends the provider's own paths (discovery, JWKS, /connect/*) to oidc-provider and everything
 * else (health, docs, interaction pages, cas-api) on to Nest. Registered before Nest's body
 * parsers, so oidc-provider reads the raw request body itself.
 */
export function mountOidcProvider(app: NestExpressApplication): void {
  const oidc = app.get(OidcService);
  app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith('/connect/') || path.startsWith('/.well-known/')) return oidc.handle(req, res);
    next();
  });
}
