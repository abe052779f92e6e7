import { createServer } from 'node:net';
import { z } from 'zod';
import { ConfigError, envField, parseEnv } from '@collect/platform';

const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL');

/**
 * Every variable `pnpm start` itself reads (docs/configuration.md, "pnpm start"); everything else
 * in its environment goes to the services unchanged and is checked by them. Checked before
 * anything starts, so a bad value stops the launcher at once with the variable named.
 */
export const launcherEnvSchema = z
  .object({
    CAS_PORT: envField.port(4000),
    COLLECT_PORT: envField.port(3000),
    WORKER_PORT: envField.optionalPort(),
    EMBEDDED_PG_PORT: envField.optionalPort(),
    EMBEDDED_REDIS_PORT: envField.optionalPort(),
    DATA_DIR: z.string().optional(),
    DATABASE_URL: postgresUrl.optional(),
    CAS_DATABASE_URL: postgresUrl.optional(),
    REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').optional(),
    SEED_DEMO: envField.bool(true),
  })
  .transform((v, ctx) => {
    const WORKER_PORT = v.WORKER_PORT ?? v.COLLECT_PORT + 1;
    if (WORKER_PORT > 65535) ctx.addIssue({ code: 'custom', path: ['WORKER_PORT'], message: `COLLECT_PORT + 1 is not a port number; set WORKER_PORT` });
    const ports: Array<[string, number | undefined]> = [
      ['CAS_PORT', v.CAS_PORT],
      ['COLLECT_PORT', v.COLLECT_PORT],
      ['WORKER_PORT', WORKER_PORT],
      ['EMBEDDED_PG_PORT', v.EMBEDDED_PG_PORT],
      ['EMBEDDED_REDIS_PORT', v.EMBEDDED_REDIS_PORT],
    ];
    for (const [i, [name, port]] of ports.entries()) {
      const earlier = ports.slice(0, i).find(([, p]) => p !== undefined && p === port);
      if (earlier) ctx.addIssue({ code: 'custom', path: [name], message: `same port as ${earlier[0]}` });
    }
    return { ...v, WORKER_PORT };
  });

export type LauncherConfig = z.output<typeof launcherEnvSchema>;

/** Empty values count as unset (`DATABASE_URL= pnpm start` uses the embedded server). */
export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  return parseEnv(launcherEnvSchema, given);
}

/** The ports this run will listen on that something else already holds, each named by its variable. */
export async function checkPortsFree(config: LauncherConfig): Promise<void> {
  const wanted: Array<[string, number | undefined]> = [
    ['CAS_PORT', config.CAS_PORT],
    ['COLLECT_PORT', config.COLLECT_PORT],
    ['WORKER_PORT', config.WORKER_PORT],
    ['EMBEDDED_PG_PORT', config.DATABASE_URL ? undefined : config.EMBEDDED_PG_PORT],
    ['EMBEDDED_REDIS_PORT', config.REDIS_URL ? undefined : config.EMBEDDED_REDIS_PORT],
  ];
  const problems: string[] = [];
  for (const [name, port] of wanted) {
    if (port !== undefined && !(await portFree(port))) problems.push(`${name}: port ${port} is already in use`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}
