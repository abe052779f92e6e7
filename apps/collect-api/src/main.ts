import { loadConfigOrExit, installGracefulShutdown, releaseStartUpMemory } from '@collect/platform';
import { Logger } from 'nestjs-pino';
import { loadCollectConfig } from './config/collect-config.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit(loadCollectConfig);
  // The app module graph (Nest, TypeORM, sharp, oidc-provider ...) loads only after the
  // configuration passed: a bad value stops the process in well under a second even on a
  // loaded machine (docs/configuration.md).
  const { createCollectApp } = await import('./app.js');
  const app = await createCollectApp(config);
  const logger = app.get(Logger);
  installGracefulShutdown(app, config.SHUTDOWN_GRACE_MS, (msg) => logger.log(msg));
  releaseStartUpMemory();
  await app.listen(config.COLLECT_PORT, config.COLLECT_HOST);
  logger.log(`collect-api listening on ${config.PUBLIC_BASE_URL}; node ${process.version}`);
}

main().catch((err) => {
  process.stderr.write(`collect-api failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
