import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { envField, parseEnv, trustedProxyHops, trustedProxyHopsFields } from '@collect/platform';

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
    // A request waits this long for a pooled connection, then answers 503 (docs/api-conventions.md, "Errors").
    DATABASE_POOL_WAIT_MS: envField.int(30_000, 100, 600_000),
    // Streamed and heavy reads: their own pool, slots and deadlines (docs/security.md, "Streamed reads and heavy queries").
    READ_POOL_SIZE: envField.int(6, 1, 200),
    READS_PER_USER: envField.int(2, 1, 1_000),
    READ_SLOT_WAIT_MS: envField.int(5_000, 0, 60_000),
    READ_SLOT_QUEUE: envField.int(64, 0, 10_000),
    READ_STATEMENT_TIMEOUT_MS: envField.int(30_000, 100, 3_600_000),
    READ_IDLE_IN_TRANSACTION_MS: envField.int(60_000, 100, 3_600_000),
    STREAM_STALL_TIMEOUT_MS: envField.int(30_000, 100, 3_600_000),
    FORM_CACHE_TTL_MS: envField.int(60_000, 0, 3_600_000),
    REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').default('redis://127.0.0.1:6379'),
    REDIS_PREFIX: z.string().default('collect'),
    LOG_LEVEL: envField.logLevel(),
    PUBLIC_BASE_URL: envField.url().optional(),
    SHUTDOWN_GRACE_MS: envField.int(25_000, 0, 600_000),
    MIGRATIONS_RUN: envField.bool(true),
    // Auth (docs/auth.md).
    AUTH_SCHEMES: z
      .string()
      .default('basic,token,temptoken,bearer')
      .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
      .pipe(z.array(z.enum(['basic', 'token', 'temptoken', 'bearer'], { message: 'must list basic, token, temptoken and/or bearer' })).min(1, 'must list at least one scheme')),
    COLLECT_SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    DEFAULT_TEMP_TOKEN_EXPIRY_TIME: envField.int(21_600, 1, 31_536_000),
    AUTH_TOKEN_CACHE_TTL_MS: envField.int(5_000, 0, 300_000),
    // Personal access tokens (docs/auth.md, "Personal access tokens").
    API_TOKEN_MAX_DAYS: envField.int(365, 1, 3_650),
    API_TOKEN_LAST_USED_FLUSH_MS: envField.int(30_000, 100, 30_000),
    AUTH_LOCKOUT_MAX_FAILURES: envField.int(5, 1, 1_000),
    AUTH_LOCKOUT_WINDOW_SECONDS: envField.int(900, 1, 86_400),
    PROFILES_REGISTRATION_ENABLED: envField.bool(true),
    COLLECT_ADMIN_USERNAME: z.string().optional(),
    COLLECT_ADMIN_PASSWORD: z.string().optional(),
    COLLECT_ADMIN_EMAIL: z.string().default(''),
    OAUTH2_ACCESS_TOKEN_EXPIRE_SECONDS: envField.int(36_000, 1, 31_536_000),
    OAUTH2_AUTHORIZATION_CODE_EXPIRE_SECONDS: envField.int(60, 1, 600),
    OAUTH2_LOGIN_SESSION_SECONDS: envField.int(3_600, 60, 86_400),
    CORS_ALLOWED_ORIGINS: envField.list('*'),
    // Forms, submissions, file storage (docs/forms.md).
    STORAGE_BACKEND: z.enum(['local', 's3']).default('local'),
    MEDIA_ROOT: z.string().default('.data/media'),
    S3_ENDPOINT: envField.url().optional(),
    S3_REGION: z.string().default('us-east-1'),
    S3_BUCKET: z.string().optional(),
    S3_PREFIX: z.string().default(''),
    S3_ACCESS_KEY_ID: z.string().optional(),
    S3_SECRET_ACCESS_KEY: z.string().optional(),
    S3_FORCE_PATH_STYLE: envField.bool(true),
    ATTACHMENT_MAX_BYTES: envField.int(104_857_600, 1, 10_737_418_240),
    SUBMISSION_XML_MAX_BYTES: envField.int(10_485_760, 1_024, 104_857_600),
    FORM_MAX_BYTES: envField.int(10_485_760, 1_024, 104_857_600),
    SUBMISSION_MAX_ATTACHMENTS: envField.int(100, 1, 10_000),
    // Parsers of user input: linear, and capped (docs/security.md, "Parsers of user input: linear, capped, checked before the body").
    INPUT_MAX_NODES: envField.int(500_000, 100, 10_000_000),
    INPUT_MAX_DEPTH: envField.int(64, 8, 1_000),
    FORM_MAX_FIELDS: envField.int(10_000, 10, 1_000_000),
    MERGED_DATASET_MAX_FORMS: envField.int(100, 2, 10_000),
    // XLSForm uploads and form media (docs/forms.md, "XLSForm uploads").
    XLSFORM_CONVERT_TIMEOUT_MS: envField.int(60_000, 1_000, 600_000),
    XLSFORM_CONVERT_CONCURRENCY: envField.int(2, 1, 64),
    XLSFORM_CONVERT_MAX_HEAP_MB: envField.int(512, 64, 8_192),
    FORM_MEDIA_MAX_BYTES: envField.int(20_971_520, 1_024, 1_073_741_824),
    UPLOAD_TMP_DIR: z.string().min(1).default(join(tmpdir(), 'collect-uploads')),
    // Rest services and forwarding (docs/restservices.md).
    FORWARD_ALLOW_PRIVATE_NETWORKS: envField.list(''),
    FORWARD_MAX_ATTEMPTS: envField.int(8, 1, 100),
    FORWARD_BACKOFF_BASE_MS: envField.int(4_000, 1, 86_400_000),
    FORWARD_BACKOFF_FACTOR: envField.int(5, 1, 100),
    FORWARD_BACKOFF_MAX_MS: envField.int(86_400_000, 1, 604_800_000),
    FORWARD_TIMEOUT_MS: envField.int(30_000, 100, 600_000),
    FORWARD_RELAY_INTERVAL_MS: envField.int(1_000, 10, 600_000),
    FORWARD_CONCURRENCY: envField.int(16, 1, 1_000),
    FORWARD_CONCURRENCY_PER_DESTINATION: envField.int(8, 1, 1_000),
    // What one user may make the platform send (docs/security.md, "Rate limits, quotas and forwarding input").
    FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE: envField.int(600, 0, 100_000),
    REPLAY_MAX_OPEN_PER_USER: envField.int(3, 1, 1_000),
    TEST_FIRE_PER_USER_PER_MINUTE: envField.int(10, 1, 10_000),
    MEDIA_VARIANTS_PER_USER_PER_MINUTE: envField.int(120, 1, 100_000),
    FORWARD_MEDIA_WAIT_SECONDS: envField.int(300, 0, 86_400),
    FORWARD_LOG_RETENTION_DAYS: envField.int(90, 0, 3_650),
    FORWARD_LOG_PRUNE_INTERVAL_MS: envField.int(3_600_000, 1_000, 86_400_000),
    // Hours (fractions allowed) of nothing but failed attempts after which a service is switched off; 0 = never.
    FORWARD_DISABLE_AFTER_HOURS: z.coerce.number({ message: 'must be a number of hours' }).min(0, 'must be 0 (never) or more').max(8_760, 'must be at most 8760 (a year)').default(24),
    FORWARD_DISABLE_CHECK_INTERVAL_MS: envField.int(60_000, 100, 86_400_000),
    WORKER_PORT: envField.port(3001),
    METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    SHEETS_API_BASE_URL: envField.url().default('https://sheets.googleapis.com'),
    SHEETS_OAUTH_AUTHORIZE_URL: envField.url().default('https://accounts.google.com/o/oauth2/v2/auth'),
    SHEETS_OAUTH_TOKEN_URL: envField.url().default('https://oauth2.googleapis.com/token'),
    SHEETS_CLIENT_ID: z.string().default(''),
    SHEETS_CLIENT_SECRET: z.string().default(''),
    // Media: listings, downloads, thumbnails (docs/media.md).
    TRUST_FORWARDED_HEADERS: envField.bool(false),
    MEDIA_S3_SIGNED_REDIRECT: envField.bool(false),
    MEDIA_S3_SIGNED_URL_TTL_SECONDS: envField.int(60, 1, 3_600),
    MEDIA_VARIANT_MAX_INPUT_PIXELS: envField.int(100_000_000, 1_000_000, 1_000_000_000),
    // Asynchronous exports (docs/exports.md): how long a finished export stays downloadable.
    EXPORT_TTL_SECONDS: envField.int(86_400, 60, 30 * 86_400),
    // Choice columns of split select-multiples in one export, all questions together (docs/exports.md, "Split select-multiples").
    EXPORT_MAX_SPLIT_COLUMNS: envField.int(2_000, 1, 100_000),
    // Asynchronous exports per user (docs/exports.md, "Quotas").
    EXPORT_OPEN_PER_USER: envField.int(3, 1, 1_000),
    EXPORT_STORAGE_QUOTA_BYTES: envField.int(2_147_483_648, 1, 1_099_511_627_776),
    MEDIA_VARIANTS_AT_SUBMISSION: envField.bool(false),
    // collect-api as a CAS application: CAS Bearer tokens, BFF sign-in, on-boarding (docs/cas-integration.md).
    // No default in production (superRefine): a localhost issuer there trusts whatever answers on the pod's own port.
    CAS_ISSUER: envField.url().optional(),
    CAS_AUDIENCE: z.string().min(1).default('collect-api'),
    CAS_SIGN_IN_ENABLED: z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).optional().transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
    CAS_CLIENT_ID: z.string().min(1).default('collect-web'),
    CAS_CLIENT_SECRET: z.string().min(1).optional(),
    CAS_API_URL: envField.url().optional(),
    CAS_ONBOARDING_CLIENT_ID: z.string().min(1).optional(),
    CAS_ONBOARDING_CLIENT_SECRET: z.string().min(1).optional(),
    CAS_AUTO_ONBOARD: envField.bool(false),
    CAS_SESSION_COOKIE_NAME: z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, - or _').default('collect_session'),
    CAS_SESSION_COOKIE_SECURE: z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).optional().transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
    CAS_SESSION_SECONDS: envField.int(28_800, 60, 2_592_000),
    CAS_LOGIN_STATE_SECONDS: envField.int(600, 30, 3_600),
    // Hardening: body limits, slow clients, rate limits (docs/security.md, "Abuse limits").
    HTTP_BODY_LIMIT_BYTES: envField.int(1_048_576, 1_024, 104_857_600),
    HTTP_HEADERS_TIMEOUT_MS: envField.int(20_000, 100, 600_000),
    HTTP_REQUEST_TIMEOUT_MS: envField.int(600_000, 100, 3_600_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: envField.int(65_000, 100, 600_000),
    HTTP_TRUSTED_PROXY_HOPS: trustedProxyHopsFields().hops,
    HTTP_TRUST_PROXY: trustedProxyHopsFields().legacyFlag,
    RATE_LIMIT_ENABLED: envField.bool(true),
    RATE_LIMIT_WINDOW_SECONDS: envField.int(60, 1, 86_400),
    RATE_LIMIT_TOKEN_PER_IP: envField.int(600, 1, 1_000_000),
    RATE_LIMIT_TOKEN_PER_CLIENT: envField.int(300, 1, 1_000_000),
    RATE_LIMIT_LOGIN_PER_IP: envField.int(100, 1, 1_000_000),
    RATE_LIMIT_LOGIN_PER_USERNAME: envField.int(30, 1, 1_000_000),
    // Decrypt exports check a passphrase or private key (docs/encryption.md "Decrypting without a server-held key").
    RATE_LIMIT_DECRYPT_PER_IP: envField.int(20, 1, 1_000_000),
    RATE_LIMIT_DECRYPT_PER_FORM: envField.int(20, 1, 1_000_000),
    // Authentication work an anonymous client can cause (docs/security.md, "Bounded work for anonymous and unauthorised callers").
    RATE_LIMIT_AUTH_FAILURES_PER_IP: envField.int(100, 1, 1_000_000),
    RATE_LIMIT_BASIC_PER_IP: envField.int(600, 1, 1_000_000),
    RATE_LIMIT_BASIC_PER_USERNAME: envField.int(300, 1, 1_000_000),
    PASSWORD_HASH_CONCURRENCY: envField.int(4, 1, 256),
    PASSWORD_HASH_QUEUE: envField.int(32, 0, 100_000),
    // Encrypted forms: the key-encryption key of `server` mode (docs/encryption.md "Modes").
    ENCRYPTION_KEK: z
      .string()
      .refine((v) => isBase64Key32(v), 'must be the base64 of exactly 32 random bytes (for example `openssl rand -base64 32`)')
      .optional(),
    // Only while rotating it: the KEK the stored keys were sealed under (docs/encryption.md "Rotating ENCRYPTION_KEK").
    ENCRYPTION_KEK_PREVIOUS: z
      .string()
      .refine((v) => isBase64Key32(v), 'must be the base64 of exactly 32 random bytes (for example `openssl rand -base64 32`)')
      .optional(),
  })
  .superRefine((env, ctx) => {
    if (env.STORAGE_BACKEND === 's3' && !env.S3_BUCKET) {
      ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'is required when STORAGE_BACKEND=s3' });
    }
    if (env.NODE_ENV === 'production' && !env.COLLECT_SECRET_KEY) {
      ctx.addIssue({ code: 'custom', path: ['COLLECT_SECRET_KEY'], message: 'is required in production (at least 32 characters)' });
    }
    if (env.NODE_ENV === 'production' && (!env.CAS_ISSUER || isLoopbackUrl(env.CAS_ISSUER))) {
      ctx.addIssue({ code: 'custom', path: ['CAS_ISSUER'], message: 'is required in production and must not be a localhost address (the default http://localhost:4000 is for development)' });
    }
    if (env.NODE_ENV === 'production' && env.CAS_SIGN_IN_ENABLED === true && !env.CAS_CLIENT_SECRET) {
      ctx.addIssue({ code: 'custom', path: ['CAS_CLIENT_SECRET'], message: 'is required in production while CAS_SIGN_IN_ENABLED=true' });
    }
  })
  .transform((env) => ({
    ...env,
    PUBLIC_BASE_URL: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.COLLECT_PORT}`).replace(/\/+$/, ''),
    // Dev-only fallbacks: production refuses to start without a real secret (superRefine above)
    // and gets no admin account unless one is configured.
    COLLECT_SECRET_KEY: env.COLLECT_SECRET_KEY ?? DEV_SECRET_KEY,
    COLLECT_ADMIN_USERNAME: env.COLLECT_ADMIN_USERNAME ?? (env.NODE_ENV === 'production' ? undefined : 'admin'),
    COLLECT_ADMIN_PASSWORD: env.COLLECT_ADMIN_PASSWORD ?? (env.NODE_ENV === 'production' ? undefined : 'admin-password'),
    ...casDefaults(env),
    // Proxies in front whose X-Forwarded-For entries count (docs/security.md, "Client addresses").
    HTTP_TRUSTED_PROXY_HOPS: trustedProxyHops(env.HTTP_TRUSTED_PROXY_HOPS, env.HTTP_TRUST_PROXY),
  }));

/** Dev-seed clients (apps/cas/seed/dev-seed.json) outside production; nothing implicit in production. */
function casDefaults(env: { NODE_ENV: string; CAS_SIGN_IN_ENABLED?: boolean; CAS_ISSUER?: string; CAS_API_URL?: string; CAS_CLIENT_SECRET?: string; CAS_ONBOARDING_CLIENT_ID?: string; CAS_ONBOARDING_CLIENT_SECRET?: string; CAS_SESSION_COOKIE_SECURE?: boolean }) {
  const dev = env.NODE_ENV !== 'production';
  const issuer = (env.CAS_ISSUER ?? DEV_CAS_ISSUER).replace(/\/+$/, '');
  return {
    // Production turns sign-in on explicitly, together with the client secret it then requires.
    CAS_SIGN_IN_ENABLED: env.CAS_SIGN_IN_ENABLED ?? dev,
    CAS_ISSUER: issuer,
    CAS_API_URL: (env.CAS_API_URL ?? issuer).replace(/\/+$/, ''),
    CAS_CLIENT_SECRET: env.CAS_CLIENT_SECRET ?? (dev ? 'collect-web-secret' : undefined),
    CAS_ONBOARDING_CLIENT_ID: env.CAS_ONBOARDING_CLIENT_ID ?? (dev ? 'demo-onboarding' : undefined),
    CAS_ONBOARDING_CLIENT_SECRET: env.CAS_ONBOARDING_CLIENT_SECRET ?? (dev ? 'demo-onboarding-secret' : undefined),
    // Secure cookies need https; development and test run on plain http://localhost.
    CAS_SESSION_COOKIE_SECURE: env.CAS_SESSION_COOKIE_SECURE ?? env.NODE_ENV === 'production',
  };
}

const DEV_SECRET_KEY = 'dev-only-collect-secret-key-change-me-0000';
const DEV_CAS_ISSUER = 'http://localhost:4000';

/** Strict base64 of 32 bytes: a typo or a passphrase put here fails at start, not at the first key. */
function isBase64Key32(v: string): boolean {
  const t = v.trim();
  return /^[A-Za-z0-9+/]{43}=$/.test(t) && Buffer.from(t, 'base64').length === 32;
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1';
}

/**
 * The validated configuration. It is a class as well as a type so that Nest injects it by the
 * parameter's type, as it injects services; the value provided is the parsed object, never an
 * instance (config.module.ts). A parameter typed with part of it (`Pick<CollectConfig, ...>`)
 * names the token: `@Inject(COLLECT_CONFIG)`.
 */
export interface CollectConfig extends z.infer<typeof collectEnvSchema> {}
export abstract class CollectConfig {}

export const COLLECT_CONFIG = CollectConfig;

export function loadCollectConfig(env: NodeJS.ProcessEnv = process.env): CollectConfig {
  return parseEnv(collectEnvSchema, env);
}
