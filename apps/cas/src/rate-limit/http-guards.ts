import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { basicUsername, BatchedRateLimitStore, checkRateLimits, clientAddress as trustedClientAddress, normalisedRoutePath, securityHeaders, type RateLimitRule } from '@collect/platform';
import type { CasConfig } from '../config/cas-config.js';
import { PostgresRateLimitBackend } from './postgres-rate-limit-store.js';

type Req = IncomingMessage;

/**
 * The rate-limited endpoints of the CAS. The token endpoint is served by oidc-provider ahead of
 * Express (oidc/mount.ts), so limits and security headers are applied here, in front of both.
 * Add a row for a new endpoint that checks a secret. Paths are compared normalised (case,
 * percent-encoding, slashes), as the routers behind serve them.
 */
export function casRateLimitRules(config: CasConfig): Array<RateLimitRule<Req> & { answer: 'oauth' | 'html' }> {
  const windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
  const isToken = (req: Req) => req.method === 'POST' && pathOf(req) === '/connect/token';
  const isLogin = (req: Req) => req.method === 'POST' && /^\/interaction\/[^/]+\/login$/.test(pathOf(req));
  return [
    { name: 'token-ip', answer: 'oauth', limit: config.RATE_LIMIT_TOKEN_PER_IP, windowMs, key: (req) => (isToken(req) ? clientAddress(req, config) : null) },
    // Client authentication in the body (client_secret_post) is counted per address only: reading the body here would take it from oidc-provider.
    { name: 'token-client', answer: 'oauth', limit: config.RATE_LIMIT_TOKEN_PER_CLIENT, windowMs, key: (req) => (isToken(req) ? basicUsername(req.headers.authorization) : null) },
    // Per username the failed-login lockout (CAS_LOGIN_MAX_FAILURES_PER_USER) already applies.
    { name: 'login-ip', answer: 'html', limit: config.RATE_LIMIT_LOGIN_PER_IP, windowMs, key: (req) => (isLogin(req) ? clientAddress(req, config) : null) },
  ];
}

function pathOf(req: Req): string {
  return normalisedRoutePath(req.url);
}

/** The address the trusted proxies saw (the same rule as Express's `trust proxy` in app.ts). */
function clientAddress(req: Req, config: CasConfig): string {
  return trustedClientAddress(req.headers['x-forwarded-for'], req.socket.remoteAddress, config.CAS_TRUSTED_PROXY_HOPS);
}

/**
 * Wraps the HTTP server's request handler (after mountOidcProvider): helmet's headers on every
 * answer, then the rate limits, then the provider or Nest.
 */
export function installCasHttpGuards(app: NestExpressApplication, config: CasConfig): void {
  const logger = new Logger('RateLimit');
  const server = app.getHttpServer() as Server;
  const [inner] = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const headers = securityHeaders(helmet);
  const backend = new PostgresRateLimitBackend(app.get(DataSource));
  // Counted in the process, added to PostgreSQL in batches: the token endpoint keeps no extra round trip.
  const store = new BatchedRateLimitStore(backend, config.RATE_LIMIT_SYNC_MS, (err) => logger.warn({ err: String(err) }, 'rate limit counts not shared'));
  const rules = config.RATE_LIMIT_ENABLED ? casRateLimitRules(config) : [];
  const cleanup = setInterval(() => void backend.deleteExpired().catch(() => undefined), 60_000);
  cleanup.unref();
  server.on('close', () => {
    clearInterval(cleanup);
    store.close();
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    headers(req, res, () => {
      const applicable = rules.filter((r) => r.key(req) !== null);
      if (!applicable.length) return inner(req, res);
      checkRateLimits(store, applicable, req).then(
        (verdict) => {
          if (!verdict) return inner(req, res);
          logger.warn({ event: 'rate_limited', rule: verdict.rule, path: pathOf(req) }, 'request refused by rate limit');
          const answer = applicable.find((r) => r.name === verdict.rule)!.answer;
          res.statusCode = 429;
          res.setHeader('Retry-After', String(verdict.retryAfterSeconds));
          res.setHeader('Cache-Control', 'no-store');
          if (answer === 'oauth') {
            res.setHeader('Content-Type', 'application/json; charset=utf-8');
            res.end(JSON.stringify({ error: 'slow_down', error_description: 'Too many requests. Try again later.' }));
          } else {
            res.setHeader('Content-Type', 'text/html; charset=utf-8');
            res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
            res.end('<!doctype html><html><head><meta charset="utf-8"><title>Too many requests</title></head><body><p>Too many sign-in attempts from your network. Try again later.</p></body></html>');
          }
        },
        (err: unknown) => {
          // The counter store is down: serve the request (an outage must not lock everyone out).
          logger.warn({ err: String(err) }, 'rate limit not counted');
          inner(req, res);
        },
      );
    });
  });
}
