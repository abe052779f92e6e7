import type { NestExpressApplication } from '@nestjs/platform-express';

/**
 * `METHOD /path` of every route the Express router holds (Nest controllers, Swagger, health).
 * Wildcard layers are Nest's middleware (CORS, auth), registered per method, not endpoints.
 */
export function listRoutes(app: NestExpressApplication): string[] {
  const express = app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
  type Layer = { route?: { path: string | string[]; methods: Record<string, boolean> } };
  const stack = (express.router ?? express._router)?.stack ?? [];
  const out = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) continue;
    if (([] as string[]).concat(layer.route.path).some((p) => p.includes('*'))) continue;
    for (const path of ([] as string[]).concat(layer.route.path)) {
      for (const [method, on] of Object.entries(layer.route.methods)) if (on && method !== '_all') out.add(`${method.toUpperCase()} ${path.replace(/\/+$/, '') || '/'}`);
    }
  }
  return [...out].sort();
}
