export default async function globalTeardown() {
  const servers = globalThis.__COLLECT_TEST_SERVERS__;
  if (!servers) return;
  await servers.redis.stop();
  await servers.pg.stop();
}
