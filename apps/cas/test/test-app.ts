import type { NestExpressApplication } from '@nestjs/platform-express';
import { fileURLToPath } from 'node:url';
import { freePort, freshTestDatabase } from '@collect/testing';
import { createCasApp } from '../src/app.js';
import { loadCasConfig, type CasConfig } from '../src/config/cas-config.js';

/** The repo's dev seed (demo clients and user), as `pnpm start` loads it. */
export const DEV_SEED = fileURLToPath(new URL('../seed/dev-seed.json', import.meta.url));

export interface TestCasApp {
  app: NestExpressApplication;
  config: CasConfig;
  /** http://127.0.0.1:<port>; also the issuer unless CAS_ISSUER is given. */
  url: string;
  close(): Promise<void>;
}

/** Boots the real CAS in this process on a fresh database, listening on a free port. */
export async function startTestCasApp(env: Record<string, string> = {}): Promise<TestCasApp> {
  const port = await freePort();
  const config = loadCasConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    CAS_DATABASE_URL: await freshTestDatabase('cas'),
    CAS_PORT: String(port),
    CAS_ISSUER: `http://127.0.0.1:${port}`,
    ...env,
  });
  const app = await createCasApp(config);
  await app.listen(config.CAS_PORT, '127.0.0.1');
  return { app, config, url: `http://127.0.0.1:${config.CAS_PORT}`, close: () => app.close() };
}
