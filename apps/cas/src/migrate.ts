import { loadConfigOrExit } from '@collect/platform';
import { loadCasConfig } from './config/cas-config.js';
import { runMigrations } from './database/data-source.js';

/** `migrate`: applies pending migrations and exits; the Kubernetes migrate Job runs this. */
async function main(): Promise<void> {
  const config = loadConfigOrExit(loadCasConfig);
  const applied = await runMigrations(config);
  process.stdout.write(`${JSON.stringify({ service: 'cas', msg: 'migrations applied', applied })}\n`);
}

main().catch((err) => {
  process.stderr.write(`migrate failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
