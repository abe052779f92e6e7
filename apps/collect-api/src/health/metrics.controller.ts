import { Controller, Get, NotFoundException, Req, Res, UnauthorizedException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { register } from 'prom-client';
import { parseAuthorization } from '../auth/auth-header.js';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';
import { SkipAuth } from '../auth/require-auth.decorator.js';
import { safeEqual } from '../crypto/secrets.js';
import { CollectConfig } from '../config/collect-config.js';

/**
 * Prometheus text format of this process (delivery counters, latency). The Ingress routes every
 * path of the API host, so /metrics is not left open in production: with `METRICS_TOKEN` set the
 * scraper sends it as a Bearer token; without it, production answers 404 and development is open.
 * SkipAuth: the Bearer here is the scrape token, not a user's credential.
 */
@ApiExcludeController()
@SkipAuth()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly config: CollectConfig) {}

  @Get()
  async metrics(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const refused = metricsRefusal(this.config, req.headers.authorization);
    if (refused === 404) throw new NotFoundException({ detail: 'Not found.' });
    if (refused === 401) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new UnauthorizedException({ detail: 'Authentication credentials were not provided.' });
    }
    res.setHeader('Content-Type', register.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(await register.metrics());
  }
}

/** Who may scrape: 404 in production without METRICS_TOKEN, 401 without that token, else null (allowed). */
export function metricsRefusal(config: Pick<CollectConfig, 'METRICS_TOKEN' | 'NODE_ENV'>, authorization: string | undefined): 404 | 401 | null {
  const token = config.METRICS_TOKEN;
  if (!token && config.NODE_ENV === 'production') return 404;
  if (!token) return null;
  const sent = parseAuthorization(authorization);
  return sent.kind === 'credentials' && sent.scheme === 'bearer' && safeEqual(sent.credentials, token) ? null : 401;
}
