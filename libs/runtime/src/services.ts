import { join } from 'node:path';

export interface ServiceDefinition {
  name: string;
  entry: string;
  /** Port whose /health/ready is awaited; null for processes without HTTP (workers). */
  port: number | null;
}

/**
 * Development defaults, applied only where the caller's environment has no value: every
 * variable given to `pnpm start` reaches both services unchanged.
 */
export function devEnvironment(env: Record<string, string>, root: string): Record<string, string> {
  const casPort = env.CAS_PORT ?? '4000';
  const collectPort = env.COLLECT_PORT ?? '3000';
  const defaults: Record<string, string> = {
    NODE_ENV: 'development',
    CAS_PORT: casPort,
    COLLECT_PORT: collectPort,
    CAS_ISSUER: `http://localhost:${casPort}`,
    PUBLIC_BASE_URL: `http://localhost:${collectPort}`,
    WORKER_PORT: String(Number(collectPort) + 1),
    CAS_DEV_SEED_FILE: join(root, 'apps/cas/seed/dev-seed.json'),
    FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8,::1/128',
    COLLECT_ADMIN_USERNAME: 'admin',
    COLLECT_ADMIN_PASSWORD: 'admin-password',
  };
  const merged = { ...defaults, ...env };
  // The CAS must accept collect-api's callback on whatever port collect-api runs.
  merged.CAS_DEV_COLLECT_WEB_REDIRECT_URI = env.CAS_DEV_COLLECT_WEB_REDIRECT_URI ?? `${merged.PUBLIC_BASE_URL}/auth/callback`;
  return merged;
}

/** Started in this order; each waits for the one before to be ready. */
export function serviceDefinitions(root: string, env: Record<string, string>): ServiceDefinition[] {
  return [
    { name: 'cas', entry: join(root, 'apps/cas/dist/main.js'), port: Number(env.CAS_PORT) },
    { name: 'collect-api', entry: join(root, 'apps/collect-api/dist/main.js'), port: Number(env.COLLECT_PORT) },
    // Delivers rest-service submissions; started after collect-api has applied the migrations.
    { name: 'collect-worker', entry: join(root, 'apps/collect-api/dist/worker.js'), port: Number(env.WORKER_PORT) },
  ];
}
