import { z } from 'zod';
import { envField, parseEnv } from '@collect/contracts';

/**
 * Every environment variable the CAS reads, with its default. docs/configuration.md lists the
 * same table; a test keeps the two in step.
 */
export const casEnvSchema = z
  .object({
    NODE_ENV: envField.nodeEnv(),
    CAS_PORT: envField.port(4000),
    CAS_HOST: z.string().default('0.0.0.0'),
    CAS_ISSUER: envField.url().optional(),
    CAS_DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').default('postgres://postgres:postgres@127.0.0.1:5432/cas'),
    CAS_DATABASE_POOL_SIZE: envField.int(10, 1, 200),
    CAS_SEED_FILE: z.string().optional(),
    LOG_LEVEL: envField.logLevel(),
    SHUTDOWN_GRACE_MS: envField.int(25_000, 0, 600_000),
    MIGRATIONS_RUN: envField.bool(true),
  })
  .transform((env) => ({
    ...env,
    CAS_ISSUER: (env.CAS_ISSUER ?? `http://localhost:${env.CAS_PORT}`).replace(/\/+$/, ''),
  }));

export type CasConfig = z.infer<typeof casEnvSchema>;

export const CAS_CONFIG = Symbol('CAS_CONFIG');

export function loadCasConfig(env: NodeJS.ProcessEnv = process.env): CasConfig {
  return parseEnv(casEnvSchema, env);
}
