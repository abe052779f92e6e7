import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { freePort, freshRedisPrefix, freshTestDatabase, sharedRedisUrl, startServiceProcess, type ServiceProcess } from '@collect/testing';
import { createCollectApp } from '../src/app.js';
import { loadCollectConfig, type CollectConfig } from '../src/config/collect-config.js';

export interface TestCollectApp {
  app: NestExpressApplication;
  config: CollectConfig;
  /** The environment the app was configured from (a replica process is started with the same). */
  env: Record<string, string>;
  /** http://127.0.0.1:<port> of the listening app. */
  url: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Listen here (when the public URL must be known before start, e.g. as a CAS redirect URI). */
  port?: number;
  /** Also run the worker's background modules (queues consumed, outbox relayed) in this process. */
  worker?: boolean;
}

/**
 * Boots the real collect-api in this process on a fresh database of the shared embedded
 * PostgreSQL and a fresh key prefix on the shared Redis, listening on a free port.
 */
export async function startTestCollectApp(env: Record<string, string> = {}, options: number | TestAppOptions = {}): Promise<TestCollectApp> {
  const { port = 0, worker = false } = typeof options === 'number' ? { port: options } : options;
  if ('FORWARD_DELIVER_IN_PROCESS' in env) throw new Error('FORWARD_DELIVER_IN_PROCESS is gone: pass { worker: true } to startTestCollectApp');
  const databaseUrl = await freshTestDatabase('collect');
  const fullEnv: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    REDIS_URL: sharedRedisUrl(),
    REDIS_PREFIX: freshRedisPrefix('collect'),
    COLLECT_PORT: '3000',
    FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8,::1/128',
    // Its own spool folder, so a suite checking for left-over upload files sees only its own.
    UPLOAD_TMP_DIR: mkdtempSync(join(tmpdir(), 'collect-uploads-test-')),
    // Its own media folder too: suites in one Jest worker share a pid and so user names
    // (test-users.ts), and a fresh database gives the same form ids, hence the same storage
    // paths; local storage never overwrites a file there (docs/forms.md, "Attachment storage paths").
    MEDIA_ROOT: mkdtempSync(join(tmpdir(), 'collect-media-test-')),
    ...env,
  };
  const config = loadCollectConfig(fullEnv);
  const app = await createCollectApp(config, { worker });
  await app.listen(port, '127.0.0.1');
  const address = app.getHttpServer().address();
  const bound = typeof address === 'object' && address ? address.port : 0;
  return { app, config, env: fullEnv, url: `http://127.0.0.1:${bound}`, close: () => app.close() };
}

/** A second collect-api on the database of `of` (a replica behind a load balancer), listening on a free port. */
export async function startReplica(of: TestCollectApp): Promise<{ app: NestExpressApplication; url: string }> {
  const app = await createCollectApp({ ...of.config, MIGRATIONS_RUN: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  return { app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/**
 * A second collect-api as a process of its own (the built `dist/main.js`), configured like `of`
 * (same database, Redis prefix, secrets and settings), waited for until /health/ready answers.
 * Its caches and change-notification listener share nothing with `of` but PostgreSQL and Redis.
 * The caller stops it (`stop()`) in afterAll; a process left over is killed when Jest's exits.
 */
export async function startReplicaProcess(of: TestCollectApp): Promise<ServiceProcess> {
  const port = await freePort();
  return startServiceProcess(MAIN, { ...of.env, LOG_LEVEL: 'warn', COLLECT_PORT: String(port), COLLECT_HOST: '127.0.0.1', MIGRATIONS_RUN: 'false' }, port, 60_000);
}
