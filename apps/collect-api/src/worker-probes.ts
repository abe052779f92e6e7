import http from 'node:http';
import { readiness, type ReadinessCheck } from '@collect/platform';
import { register } from 'prom-client';
import type { CollectConfig } from './config/collect-config.js';
import { metricsRefusal } from './health/metrics.controller.js';

/**
 * The worker's only HTTP surface, on WORKER_PORT: `/health/live`, `/health/ready` (database and
 * Redis, the same checks and bodies as the API's) and `/metrics` (same scrape-token rule). A
 * plain node:http server: the worker is no HTTP application and mounts no API route.
 */
export function workerProbeServer(checks: ReadinessCheck[], config: CollectConfig): http.Server {
  const send = (res: http.ServerResponse, status: number, body: string, type = 'application/json', extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...extra });
    res.end(body);
  };
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, JSON.stringify({ detail: `Method "${req.method}" not allowed.` }), 'application/json', { Allow: 'GET, HEAD' });
      if (path === '/health/live') return send(res, 200, JSON.stringify({ status: 'ok' }));
      if (path === '/health/ready') {
        const report = await readiness(checks);
        return report.status === 'ok' ? send(res, 200, JSON.stringify(report)) : send(res, 503, JSON.stringify({ detail: 'Service unavailable.', ...report }));
      }
      if (path === '/metrics') {
        const refused = metricsRefusal(config, req.headers.authorization);
        if (refused === 404) return send(res, 404, JSON.stringify({ detail: 'Not found.' }));
        if (refused === 401) return send(res, 401, JSON.stringify({ detail: 'Authentication credentials were not provided.' }), 'application/json', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
        return send(res, 200, await register.metrics(), register.contentType);
      }
      send(res, 404, JSON.stringify({ detail: 'Not found.' }));
    };
    answer().catch(() => send(res, 500, JSON.stringify({ detail: 'A server error occurred.' })));
  });
}
