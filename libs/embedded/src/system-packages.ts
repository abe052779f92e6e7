import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * Programs the README's commands need that npm cannot supply (docs/operations.md, "Debian
 * packages"): `pnpm start` needs redis-server, `pnpm test` also Chromium.
 * They come from Debian's packages; as root they are installed on first use, otherwise the
 * message gives the exact command to run.
 */
export interface SystemPackage {
  /** Debian package name. */
  debian: string;
  /** A command looked up on PATH, or an absolute path, that exists once the package is installed. */
  provides: string;
}

export const REDIS_SERVER: SystemPackage = { debian: 'redis-server', provides: 'redis-server' };
export const CHROMIUM: SystemPackage = { debian: 'chromium', provides: '/usr/bin/chromium' };

/** Flags playwright-core launches Debian's Chromium with (no sandbox: tests run as root in CI). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface EnsureOptions {
  log?: (line: string) => void;
  /** Where commands are looked up and what apt-get runs with; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Whether we may install (root); the current process's uid by default. */
  root?: boolean;
}

/** Seconds apt-get waits for another apt/dpkg run to release its lock instead of failing at once. */
const LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=300'];

export function findExecutable(program: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = isAbsolute(program) ? [program] : (env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, program));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

export function missingPackages(packages: SystemPackage[], env: NodeJS.ProcessEnv = process.env): SystemPackage[] {
  return packages.filter((p) => !findExecutable(p.provides, env));
}

/** The command a user who is not root types to install `packages`. */
export function installCommand(packages: SystemPackage[]): string {
  return `sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages.map((p) => p.debian).join(' ')}`;
}

/** Installs the missing ones with apt-get when root; throws with the exact command otherwise. */
export function ensureSystemPackages(packages: SystemPackage[], options: EnsureOptions = {}): void {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const missing = missingPackages(packages, env);
  if (missing.length === 0) return;
  const names = missing.map((p) => p.debian);
  const what = missing.map((p) => `${p.provides} (Debian package ${p.debian})`).join(', ');
  if (!(options.root ?? process.getuid?.() === 0)) {
    throw new Error(`${what} not installed. Install with:\n  ${installCommand(missing)}`);
  }
  log(`installing ${names.join(' ')} with apt-get (missing: ${what})`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [[...LOCK_WAIT, 'update'], [...LOCK_WAIT, 'install', '-y', '--no-install-recommends', ...names]]) {
    const run = spawnSync('apt-get', args, { env: aptEnv, stdio: ['ignore', 'inherit', 'inherit'] });
    if (run.status !== 0) {
      throw new Error(`apt-get ${args.join(' ')} failed (${run.error ? run.error.message : `exit ${run.status}`}); install ${names.join(' ')} by hand: ${installCommand(missing)}`);
    }
  }
  const still = missingPackages(missing, env);
  if (still.length > 0) throw new Error(`apt-get installed ${names.join(' ')} but ${still.map((p) => p.provides).join(', ')} is still missing`);
}
