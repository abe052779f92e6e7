import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, GiveUp, pnpmCommand, trackChild, waitFor } from '@collect/testing';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const START = join(REPO, 'libs/runtime/dist/start.js');
/** The workspace projects `pnpm build` compiles. */
const BUILT = (JSON.parse(readFileSync(join(REPO, 'tsconfig.build.json'), 'utf8')) as { references: Array<{ path: string }> }).references.map((r) => r.path);

/** Command lines of the running processes that mention one of `needles` (from /proc: no `ps` on a minimal machine). */
function processesUsing(needles: string[]): string[] {
  const wanted = needles.filter(Boolean);
  const lines: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let args: string;
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue; // ended meanwhile
    }
    if (wanted.some((needle) => args.includes(needle))) lines.push(`${pid} ${args}`);
  }
  return lines;
}

/** Ctrl-C stops every process the launcher began: the services, PostgreSQL (its data folder) and redis-server (its address). */
async function noProcessesUsing(...dirs: string[]): Promise<void> {
  await waitFor(async () => processesUsing(dirs).length === 0, 15_000, 'every process started to end').catch(() => undefined);
  expect(processesUsing(dirs)).toEqual([]);
}

function redisAddress(output: string): string {
  const port = /local redis-server on port (\d+)/.exec(output)?.[1];
  expect(port).toBeDefined();
  return `redis-server 127.0.0.1:${port}`;
}

describe('pnpm start checks its own variables first', () => {
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    busyPort = await freePort();
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(busyPort, resolve));
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it.each([
    { env: { COLLECT_PORT: 'not-a-port' }, message: 'COLLECT_PORT: must be a port number 1-65535 (got "not-a-port")' },
    { env: { CAS_PORT: '99999' }, message: 'CAS_PORT: must be a port number 1-65535 (got "99999")' },
    { env: { EMBEDDED_PG_PORT: 'pg' }, message: 'EMBEDDED_PG_PORT: must be a port number 1-65535 (got "pg")' },
    { env: { COLLECT_PORT: '65535' }, message: 'WORKER_PORT: COLLECT_PORT + 1 is not a port number; set WORKER_PORT' },
    { env: { CAS_PORT: '5000', COLLECT_PORT: '5000' }, message: 'COLLECT_PORT: same port as CAS_PORT (got "5000")' },
    { env: { SEED_DEMO: 'maybe' }, message: 'SEED_DEMO: must be true or false (got "maybe")' },
    { env: { DATABASE_URL: 'mysql://db/collect' }, message: 'DATABASE_URL: must be a postgres:// URL (got "***")' },
    { env: { CAS_PORT: 'busy' }, message: 'CAS_PORT: port BUSY is already in use' },
  ])('$env: exits 78 naming the variable, with nothing started', ({ env, message }) => {
    const given = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === 'busy' ? String(busyPort) : v]));
    const run = spawnSync(process.execPath, [START], {
      env: { ...process.env, DATABASE_URL: '', REDIS_URL: '', ...given },
      encoding: 'utf8',
      // Far above the fraction of a second it takes; a launcher that waits for services instead never gets here.
      timeout: 20_000,
    });
    expect(run.stderr).toContain(message.replace('BUSY', String(busyPort)));
    expect(run.status).toBe(78);
    expect(run.stdout).not.toContain('embedded PostgreSQL');
    expect(run.stderr).not.toContain('CAS_DEV_COLLECT_WEB_REDIRECT_URI');
  });
});

/**
 * The README's start command the way a newcomer runs it: a fresh clone in a home-like folder of
 * mode 0700, `pnpm install --frozen-lockfile`, then the launcher through pnpm (`pnpm exec`, which
 * puts the clone's node_modules/.bin first on PATH as `pnpm start` does). On this machine that
 * runs as root, so PostgreSQL runs as the OS user `postgres`, which cannot enter the clone.
 * `pnpm start` would first compile the clone; its output is the same as this checkout's (the test
 * run has just built it), so the built folders are copied instead, sparing the run two compiles.
 */
describe('pnpm start from a fresh clone in a private folder (mode 0700)', () => {
  const home = mkdtempSync(join(tmpdir(), 'collect-home-'));
  const clone = join(home, 'collect');
  let pgData = '';
  const ports = { CAS_PORT: '', COLLECT_PORT: '', WORKER_PORT: '' };

  beforeAll(async () => {
    expect(statSync(home).mode & 0o777).toBe(0o700);
    execFileSync('git', ['clone', '--quiet', REPO, clone]);
    const install = pnpmCommand(['install', '--frozen-lockfile', '--offline']);
    execFileSync(install.cmd, install.args, { cwd: clone, stdio: 'ignore' });
    for (const project of BUILT) cpSync(join(REPO, project, 'dist'), join(clone, project, 'dist'), { recursive: true });
    for (const name of Object.keys(ports) as Array<keyof typeof ports>) ports[name] = String(await freePort());
  }, 300_000);

  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    if (pgData && !pgData.startsWith(clone)) rmSync(join(pgData, '..'), { recursive: true, force: true });
  });

  /** The launcher in its own process group, so stopping it is the terminal's Ctrl-C (SIGINT to the group). */
  async function launchInClone(): Promise<{ child: ChildProcess; output: () => string; ctrlC: () => Promise<void> }> {
    const start = pnpmCommand(['exec', 'node', 'libs/runtime/dist/start.js']);
    const child = trackChild(
      spawn(start.cmd, start.args, {
        cwd: clone,
        detached: true,
        env: { ...process.env, ...ports, DATABASE_URL: '', REDIS_URL: '', DATA_DIR: '', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    const ctrlC = async () => {
      process.kill(-child.pid!, 'SIGINT');
      await waitFor(async () => child.exitCode !== null || child.signalCode !== null, 30_000, 'the launcher to stop');
    };
    try {
      await waitFor(async () => {
        if (child.exitCode !== null) throw new GiveUp(`the launcher exited ${child.exitCode}: ${out.slice(-4000)}`);
        return out.includes('Ctrl-C stops everything.');
      }, 240_000, 'the launcher to bring both services up');
    } catch (err) {
      if (child.exitCode === null) await ctrlC().catch(() => process.kill(-child.pid!, 'SIGKILL'));
      throw err;
    }
    return { child, output: () => out, ctrlC };
  }

  it('installs and starts both services on Node 24, keeps the data between runs and stops on Ctrl-C', async () => {
    const first = await launchInClone();
    try {
      for (const port of Object.values(ports)) {
        const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/json/);
      }
      const out = first.output();
      // The clone's own Node 24 from npm runs the launcher and the services, whatever Node ran pnpm.
      expect(out).toContain(`[start] node v24.`);
      expect(out).toMatch(new RegExp(`\\[start\\] node v24\\.\\d+\\.\\d+ \\(${clone.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/node_modules/`));
      for (const line of ['cas listening', 'collect-api listening', 'collect-api worker delivering']) {
        expect(out.split('\n').find((l) => l.includes(line))).toMatch(/; node v24\./);
      }
      expect(out).not.toContain('Unsupported runtime');
      expect(out).not.toMatch(/\(node:\d+\) \w*Warning/);

      pgData = /embedded PostgreSQL on port \d+ \(new data in (\S+)\)/.exec(out)?.[1] ?? '';
      if (process.getuid?.() === 0) {
        expect(out).toContain(`PostgreSQL runs as the OS user "postgres", which cannot enter ${clone}/.data (a private folder)`);
        expect(pgData).toMatch(/^\/var\/tmp\/collect-platform\/data-collect-[0-9a-f]{12}\/pg$/);
      } else {
        expect(pgData).toBe(join(clone, '.data/pg'));
      }
      expect(out).toMatch(/demo data: form demo_media_survey for admin \(3 submissions added, 0 already there\)/);
      const admin = { Authorization: `Basic ${Buffer.from('admin:admin-password').toString('base64')}` };
      const forms = (await (await fetch(`http://127.0.0.1:${ports.COLLECT_PORT}/api/v1/forms`, { headers: admin })).json()) as Array<{ id_string: string; num_of_submissions: number }>;
      expect(forms).toEqual([expect.objectContaining({ id_string: 'demo_media_survey', num_of_submissions: 3 })]);
      const media = (await (await fetch(`http://127.0.0.1:${ports.COLLECT_PORT}/api/v1/media/count`, { headers: admin })).json()) as { count: number };
      expect(media.count).toBe(9);
    } finally {
      await first.ctrlC();
    }
    await noProcessesUsing(clone, pgData, redisAddress(first.output()));
    // Ctrl-C reaches every process of the terminal's group; the services drain while their
    // database and Redis still run (the launcher stops those two after them).
    const stopping = first.output().slice(first.output().indexOf('received SIGINT'));
    expect(stopping).toContain('received SIGINT');
    expect(stopping).not.toMatch(/ECONNREFUSED|terminating connection due to administrator command|queue error/);

    const second = await launchInClone();
    try {
      expect(second.output()).toContain(`embedded PostgreSQL on port`);
      expect(second.output()).toContain(`(reusing data in ${pgData})`);
      expect(second.output()).toMatch(/demo data: form demo_media_survey for admin \(0 submissions added, 3 already there\)/);
    } finally {
      await second.ctrlC();
    }
    await noProcessesUsing(clone, pgData, redisAddress(second.output()));
  }, 600_000);
});
