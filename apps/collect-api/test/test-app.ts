import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { freshRedisPrefix, freshTestDatabase, sharedRedisUrl } from '@collect/testing';
import { createCollectApp } from '../src/app.js';
import { loadCollectConfig, type CollectConfig } from '../src/config/collect-config.js';

export interface TestCollectApp {
  app: NestExpressApplication;
  config: CollectConfig;
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
  const config = loadCollectConfig({
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
  });
  const app = await createCollectApp(config, { worker });
  await app.listen(port, '127.0.0.1');
  const address = app.getHttpServer().address();
  const bound = typeof address === 'object' && address ? address.port : 0;
  return { app, config, url: `http://127.0.0.1:${bound}`, close: () => app.close() };
}

/** A second collect-api on the database of `of` (a replica behind a load balancer), listening on a free port. */
export async function startReplica(of: TestCollectApp): Promise<{ app: NestExpressApplication; url: string }> {
  const app = await createCollectApp({ ...of.config, MIGRATIONS_RUN: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  return { app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}
