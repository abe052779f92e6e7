import { z } from 'zod';
import { envField, parseEnv, trustedProxyHops, trustedProxyHopsFields } from '@collect/platform';

/** Used only outside production, where CAS_KEY_ENCRYPTION_KEY / CAS_COOKIE_KEYS may stay unset. */
export const DEV_KEY_ENCRYPTION_KEY = 'dev-only-key-encryption-key-change-me';
export const DEV_COOKIE_KEY = 'dev-only-cookie-key-change-me';

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
    CAS_DEV_SEED_FILE: z.string().optional(),
    CAS_DEV_COLLECT_WEB_REDIRECT_URI: envField.url().optional(),
    CAS_KEY_ENCRYPTION_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
    CAS_KEY_ENCRYPTION_KEY_PREVIOUS: z.string().min(16, 'must be at least 16 characters').optional(),
    CAS_COOKIE_KEYS: envField.list(''),
    CAS_ACCESS_TOKEN_TTL: envField.int(3600, 60, 86_400),
    CAS_ID_TOKEN_TTL: envField.int(3600, 60, 86_400),
    CAS_REFRESH_TOKEN_TTL: envField.int(14 * 86_400, 300, 365 * 86_400),
    CAS_SESSION_TTL: envField.int(86_400, 300, 30 * 86_400),
    CAS_KEY_ROTATION_DAYS: envField.int(90, 1, 3650),
    CAS_KEY_CHECK_SECONDS: envField.int(60, 1, 86_400),
    CAS_LOGIN_MAX_FAILURES_PER_USER: envField.int(5, 1, 1000),
    CAS_LOGIN_MAX_FAILURES_PER_IP: envField.int(20, 1, 100_000),
    CAS_LOGIN_WINDOW_SECONDS: envField.int(900, 10, 86_400),
    PASSWORD_HASH_CONCURRENCY: envField.int(4, 1, 256),
    PASSWORD_HASH_QUEUE: envField.int(32, 0, 100_000),
    CAS_CLIENT_CACHE_SECONDS: envField.int(5, 0, 3600),
    CAS_TRUSTED_PROXY_HOPS: trustedProxyHopsFields().hops,
    CAS_TRUST_PROXY: trustedProxyHopsFields().legacyFlag,
    LOG_LEVEL: envField.logLevel(),
    SHUTDOWN_GRACE_MS: envField.int(25_000, 0, 600_000),
    MIGRATIONS_RUN: envField.bool(true),
    // Hardening: body limits, slow clients, rate limits (docs/security.md, "Abuse limits").
    HTTP_BODY_LIMIT_BYTES: envField.int(1_048_576, 1_024, 104_857_600),
    HTTP_HEADERS_TIMEOUT_MS: envField.int(20_000, 100, 600_000),
    HTTP_REQUEST_TIMEOUT_MS: envField.int(60_000, 100, 3_600_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: envField.int(65_000, 100, 600_000),
    RATE_LIMIT_ENABLED: envField.bool(true),
    RATE_LIMIT_WINDOW_SECONDS: envField.int(60, 1, 86_400),
    RATE_LIMIT_TOKEN_PER_IP: envField.int(1_200, 1, 1_000_000),
    RATE_LIMIT_TOKEN_PER_CLIENT: envField.int(600, 1, 1_000_000),
    RATE_LIMIT_LOGIN_PER_IP: envField.int(100, 1, 1_000_000),
    RATE_LIMIT_SYNC_MS: envField.int(200, 10, 60_000),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production') return;
    // Dev-only conveniences must never reach production silently.
    if (!env.CAS_KEY_ENCRYPTION_KEY) ctx.addIssue({ code: 'custom', path: ['CAS_KEY_ENCRYPTION_KEY'], message: 'required in production' });
    if (env.CAS_COOKIE_KEYS.length === 0) ctx.addIssue({ code: 'custom', path: ['CAS_COOKIE_KEYS'], message: 'required in production' });
    if (env.CAS_DEV_SEED_FILE) ctx.addIssue({ code: 'custom', path: ['CAS_DEV_SEED_FILE'], message: 'the dev seed is refused in production' });
  })
  .transform((env) => ({
    ...env,
    CAS_ISSUER: (env.CAS_ISSUER ?? `http://localhost:${env.CAS_PORT}`).replace(/\/+$/, ''),
    CAS_KEY_ENCRYPTION_KEY: env.CAS_KEY_ENCRYPTION_KEY ?? DEV_KEY_ENCRYPTION_KEY,
    CAS_COOKIE_KEYS: env.CAS_COOKIE_KEYS.length ? env.CAS_COOKIE_KEYS : [DEV_COOKIE_KEY],
    // Proxies in front whose X-Forwarded-* count (docs/security.md, "Client addresses").
    CAS_TRUSTED_PROXY_HOPS: trustedProxyHops(env.CAS_TRUSTED_PROXY_HOPS, env.CAS_TRUST_PROXY),
  }));

export type CasConfig = z.infer<typeof casEnvSchema>;

export const CAS_CONFIG = Symbol('CAS_CONFIG');

export function loadCasConfig(env: NodeJS.ProcessEnv = process.env): CasConfig {
  return parseEnv(casEnvSchema, env);
}
