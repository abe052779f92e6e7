import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { HttpRequest as Request, HttpResponse as Response, NextFn as NextFunction } from './http-types.js';
import { CollectConfig } from '../config/collect-config.js';

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, X-Requested-With, X-OpenRosa-Version';
const EXPOSE_HEADERS = 'WWW-Authenticate, Retry-After, Location';

/**
 * CORS for browser clients (spec §5.1): any origin by default (CORS_ALLOWED_ORIGINS narrows
 * it), `Authorization` and `Content-Type` allowed, never `Access-Control-Allow-Credentials`:
 * the API authenticates by header, not cookies. Preflights are answered here, before the
 * AuthGuard, with 204.
 */
@Injectable()
export class CorsMiddleware implements NestMiddleware {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(config: CollectConfig) {
    this.any = config.CORS_ALLOWED_ORIGINS.includes('*');
    this.origins = new Set(config.CORS_ALLOWED_ORIGINS.map((o) => o.replace(/\/+$/, '')));
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const origin = req.headers.origin;
    const allowed = origin !== undefined && (this.any || this.origins.has(origin));
    if (allowed) {
      if (this.any) res.setHeader('Access-Control-Allow-Origin', '*');
      else {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.append('Vary', 'Origin');
      }
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    }
    if (req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method']) {
      if (allowed) {
        res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
        res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
        res.setHeader('Access-Control-Max-Age', '86400');
      }
      res.status(204).end();
      return;
    }
    next();
  }
}
