/**
 * `pnpm start`: embedded defaults for a fresh machine. Checks its own variables first, then
 * starts PostgreSQL (binaries from npm, data kept between runs: see embedded-data.ts) and a local
 * redis-server (installed from Debian when missing and root) unless DATABASE_URL / REDIS_URL are
 * given, then the CAS and collect-api as child processes with every variable of this
 * environment passed through, and adds collect-api's demo form with a few submissions
 * (SEED_DEMO=false skips it; the CAS seeds its own dev clients and user). Ctrl-C stops everything.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import exitHook from 'async-exit-hook';
import { ConfigError, loadConfigOrExit } from '@collect/platform';
import { startPostgres, startRedis, stopChild, type ServiceProcess } from '@collect/embedded';
import { embeddedPostgresDir } from './embedded-data.js';
import { checkPortsFree, loadLauncherConfig } from './launcher-config.js';
import { devEnvironment, serviceDefinitions } from './services.js';
import { startManagedService } from './managed-service.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const log = (msg: string) => process.stdout.write(`[start] ${msg}\n`);

async function main(): Promise<void> {
  const config = loadConfigOrExit(() => loadLauncherConfig(process.env));
  await checkPortsFree(config);
  log(`node ${process.version} (${process.execPath})`);
  const stops: Array<() => Promise<unknown>> = [];
  const services: ServiceProcess[] = [];
  exitHook((done) => {
    log('stopping...');
    Promise.allSettled(services.map((s) => stopChild(s.child, 'SIGTERM', 15_000)))
      .then(() => Promise.allSettled(stops.reverse().map((stop) => stop())))
      .finally(done);
  });

  const env: Record<string, string> = {};
  if (!config.DATABASE_URL) {
    const { dir, note } = embeddedPostgresDir(root, config.DATA_DIR);
    if (note) log(note);
    const reused = existsSync(join(dir, 'PG_VERSION'));
    const pg = await startPostgres({ dataDir: dir, port: config.EMBEDDED_PG_PORT });
    stops.push(() => pg.stop());
    env.DATABASE_URL = await pg.createDatabase('collect');
    env.CAS_DATABASE_URL = config.CAS_DATABASE_URL ?? (await pg.createDatabase('cas'));
    log(`embedded PostgreSQL on port ${pg.port} (${reused ? 'reusing' : 'new'} data in ${dir})`);
  } else {
    env.CAS_DATABASE_URL = config.CAS_DATABASE_URL ?? config.DATABASE_URL;
  }
  if (!config.REDIS_URL) {
    const redis = await startRedis({ port: config.EMBEDDED_REDIS_PORT, log });
    stops.push(() => redis.stop());
    env.REDIS_URL = redis.url;
    log(`local redis-server on port ${redis.port}`);
  }

  const ports = { CAS_PORT: String(config.CAS_PORT), COLLECT_PORT: String(config.COLLECT_PORT), WORKER_PORT: String(config.WORKER_PORT) };
  const fullEnv = devEnvironment({ ...process.env, ...env, ...ports } as Record<string, string>, root);
  for (const def of serviceDefinitions(root, fullEnv)) {
    const svc = await startManagedService(def, fullEnv, log);
    services.push(svc);
  }
  if (config.SEED_DEMO) await seedDemo(fullEnv);
  log(`CAS:         ${fullEnv.CAS_ISSUER}  (discovery: ${fullEnv.CAS_ISSUER}/.well-known/openid-configuration, docs: /docs)`);
  log(`collect-api: ${fullEnv.PUBLIC_BASE_URL}  (API: /api/v1/, docs: /api/docs)`);
  log('Ctrl-C stops everything.');
}

/** `pnpm seed:demo` against the collect-api just started (idempotent: a restart adds nothing). */
async function seedDemo(env: Record<string, string>): Promise<void> {
  const script = join(root, 'apps/collect-api/dist/seed/seed-demo.js');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script], { env: { ...env, COLLECT_URL: `http://127.0.0.1:${env.COLLECT_PORT}` }, timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { id_string?: string; submissions?: string[] };
    const added = (out.submissions ?? []).filter((s) => s === 'created').length;
    log(`demo data: form ${out.id_string} for ${env.COLLECT_ADMIN_USERNAME} (${added} submissions added, ${(out.submissions?.length ?? 0) - added} already there)`);
  } catch (err) {
    // The services are up; a failed demo seed should not take them down.
    log(`demo data not added: ${err instanceof Error ? err.message : String(err)}`);
  }
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`[start] failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
