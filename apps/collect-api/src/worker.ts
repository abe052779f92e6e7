import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit, installGracefulShutdown, READINESS_CHECKS, releaseStartUpMemory, startupLogger, type ReadinessCheck } from '@collect/platform';
import { Logger } from 'nestjs-pino';
import { loadCollectConfig } from './config/collect-config.js';
import { WorkerModule } from './worker.module.js';
import { workerProbeServer } from './worker-probes.js';

/**
 * The delivery worker: WorkerModule (queues consumed, outbox relayed, log pruned) in a Nest
 * application context, no HTTP app; /health/* and /metrics on WORKER_PORT for probes and
 * scraping. On SIGTERM it stops taking jobs and lets the ones in flight finish within
 * SHUTDOWN_GRACE_MS; jobs not started stay queued, rows not finished are re-queued by lease.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(loadCollectConfig);
  // Migrations belong to the API process / the migrate Job; two processes racing them is not useful.
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot({ ...config, MIGRATIONS_RUN: false }), { logger: startupLogger('collect-worker', config.LOG_LEVEL) });
  const logger = app.get(Logger);
  app.useLogger(logger);
  const probes = workerProbeServer(app.get<ReadinessCheck[]>(READINESS_CHECKS, { strict: false }), config);
  installGracefulShutdown({ close: async () => { probes.close(); await app.close(); } }, config.SHUTDOWN_GRACE_MS, (msg) => logger.log(msg));
  releaseStartUpMemory();
  await new Promise<void>((resolve, reject) => probes.once('error', reject).listen(config.WORKER_PORT, config.COLLECT_HOST, resolve));
  logger.log(`collect-api worker delivering; health on port ${config.WORKER_PORT}; node ${process.version}`);
}

main().catch((err) => {
  process.stderr.write(`collect-api worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
