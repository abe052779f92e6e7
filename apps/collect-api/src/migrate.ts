import { loadConfigOrExit } from '@collect/platform';
import { loadCollectConfig } from './config/collect-config.js';
import { runMigrations } from './data-source.js';

/** `migrate`: applies pending migrations and exits; the Kubernetes migrate Job runs this. */
async function main(): Promise<void> {
  const config = loadConfigOrExit(loadCollectConfig);
  const applied = await runMigrations(config);
  process.stdout.write(`${JSON.stringify({ service: 'collect-api', msg: 'migrations applied', applied })}\n`);
}

main().catch((err) => {
  process.stderr.write(`migrate failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
