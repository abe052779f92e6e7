import { z } from 'zod';
import { envField, parseEnv } from '@collect/contracts';

/**
 * Every environment variable collect-api reads, with its default. docs/configuration.md lists
 * the same table; a test keeps the two in step.
 */
export const collectEnvSchema = z
  .object({
    NODE_ENV: envField.nodeEnv(),
    COLLECT_PORT: envField.port(3000),
    COLLECT_HOST: z.string().default('0.0.0.0'),
    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').default('postgres://postgres:postgres@127.0.0.1:5432/collect'),
    DATABASE_POOL_SIZE: envField.int(10, 1, 200),
    REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').default('redis://127.0.0.1:6379'),
    REDIS_PREFIX: z.string().default('collect'),
    LOG_LEVEL: envField.logLevel(),
    PUBLIC_BASE_URL: envField.url().optional(),
    SHUTDOWN_GRACE_MS: envField.int(25_000, 0, 600_000),
    MIGRATIONS_RUN: envField.bool(true),
  })
  .transform((env) => ({
    ...env,
    PUBLIC_BASE_URL: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.COLLECT_PORT}`).replace(/\/+$/, ''),
  }));

export type CollectConfig = z.infer<typeof collectEnvSchema>;

export const COLLECT_CONFIG = Symbol('COLLECT_CONFIG');

export function loadCollectConfig(env: NodeJS.ProcessEnv = process.env): CollectConfig {
  return parseEnv(collectEnvSchema, env);
}
