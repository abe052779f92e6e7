import { loadConfigOrExit, installGracefulShutdown, releaseStartUpMemory } from '@collect/platform';
import { Logger } from 'nestjs-pino';
import { loadCasConfig } from './config/cas-config.js';
import { SeedError } from './clients/seed-format.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit(loadCasConfig);
  // The app module graph (Nest, TypeORM, sharp, oidc-provider ...) loads only after the
  // configuration passed: a bad value stops the process in well under a second even on a
  // loaded machine (docs/configuration.md).
  const { createCasApp } = await import('./app.js');
  const app = await createCasApp(config);
  const logger = app.get(Logger);
  installGracefulShutdown(app, config.SHUTDOWN_GRACE_MS, (msg) => logger.log(msg));
  releaseStartUpMemory();
  await app.listen(config.CAS_PORT, config.CAS_HOST);
  logger.log(`cas listening; issuer ${config.CAS_ISSUER}; node ${process.version}`);
}

main().catch((err) => {
  if (err instanceof SeedError) {
    // An operator's file is wrong: say what, without a stack, and exit like a config error.
    process.stderr.write(`cas: ${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`cas failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
