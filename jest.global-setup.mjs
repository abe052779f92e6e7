// Runs once per Jest run, before any worker starts; workers inherit process.env.
// Uses the built library (pnpm test builds first) because Jest's root config has no TS transform.
import { startPostgres, startRedis } from './libs/testing/dist/index.js';

export default async function globalSetup() {
  const pg = await startPostgres({ fast: true });
  const redis = await startRedis();
  process.env.TEST_PG_ADMIN_URL = pg.adminUrl;
  process.env.TEST_REDIS_URL = redis.url;
  globalThis.__COLLECT_TEST_SERVERS__ = { pg, redis };
}
