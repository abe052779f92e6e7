import { loadConfigOrExit, installGracefulShutdown } from '@collect/platform';
import { Logger } from 'nestjs-pino';
import { createCollectApp } from './app.js';
import { loadCollectConfig } from './config/collect-config.js';

/**
 * The delivery worker: the same application with the rest-service delivery queue consumed and
 * the outbox relay polling. It serves /health/* and /metrics on WORKER_PORT for probes and
 * scraping. On SIGTERM it stops taking jobs and lets the ones in flight finish within
 * SHUTDOWN_GRACE_MS; jobs not started stay queued, rows not finished are re-queued by lease.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(loadCollectConfig);
  // Migrations belong to the API process / the migrate Job; two processes racing them is not useful.
  const app = await createCollectApp({ ...config, FORWARD_DELIVER_IN_PROCESS: true, MIGRATIONS_RUN: false });
  const logger = app.get(Logger);
  installGracefulShutdown(app, config.SHUTDOWN_GRACE_MS, (msg) => logger.log(msg));
  await app.listen(config.WORKER_PORT, config.COLLECT_HOST);
  logger.log(`collect-api worker delivering; health on port ${config.WORKER_PORT}; node ${process.version}`);
}

main().catch((err) => {
  process.stderr.write(`collect-api worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
