import { Controller, Get, Inject, NotFoundException, Req, Res, UnauthorizedException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { register } from 'prom-client';
import { parseAuthorization } from '../auth/auth-header.js';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';
import { SkipAuth } from '../auth/require-auth.decorator.js';
import { safeEqual } from '../crypto/secrets.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';

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
  constructor(@Inject(COLLECT_CONFIG) private readonly config: CollectConfig) {}

  @Get()
  async metrics(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    const token = this.config.METRICS_TOKEN;
    if (!token && this.config.NODE_ENV === 'production') throw new NotFoundException({ detail: 'Not found.' });
    if (token) {
      const sent = parseAuthorization(req.headers.authorization);
      if (sent.kind !== 'credentials' || sent.scheme !== 'bearer' || !safeEqual(sent.credentials, token)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        throw new UnauthorizedException({ detail: 'Authentication credentials were not provided.' });
      }
    }
    res.setHeader('Content-Type', register.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(await register.metrics());
  }
}
