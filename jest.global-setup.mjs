// Runs once per Jest run, before any worker starts; workers inherit process.env.
// Uses the built library (pnpm test builds first) because Jest's root config has no TS transform.
import { CHROMIUM, ensureSystemPackages, REDIS_SERVER, startPostgres, startRedis } from './libs/testing/dist/index.js';

export default async function globalSetup() {
  // What npm cannot supply: redis-server for Bull, Chromium for the browser tests (apt-get as root, else the command to run).
  ensureSystemPackages([REDIS_SERVER, CHROMIUM], { log: (line) => process.stdout.write(`\n[test setup] ${line}\n`) });
  const pg = await startPostgres({ fast: true });
  const redis = await startRedis();
  process.env.TEST_PG_ADMIN_URL = pg.adminUrl;
  process.env.TEST_REDIS_URL = redis.url;
  globalThis.__COLLECT_TEST_SERVERS__ = { pg, redis };
}
