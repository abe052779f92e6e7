// The container engine for `pnpm images:check` (docs/operations.md, "Images checked end to end"):
// `docker` when a daemon answers, else podman/buildah from Debian with a configuration of its own.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function say(line) {
  process.stdout.write(`[images:check] ${line}\n`);
}

/** Runs a command; resolves with its output, rejects with its last lines when it fails. */
export function run(cmd, args, { env = process.env, quiet = false, input } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (!quiet) process.stdout.write(d);
    });
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-20_000);
      if (!quiet) process.stderr.write(d);
    });
    if (input !== undefined) child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${(err || out).split('\n').slice(-25).join('\n')}`));
    });
  });
}

export function succeeds(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { env, stdio: 'ignore', timeout: 30_000 });
  return r.status === 0;
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Debian packages, installed when missing and root (apt-get update first); otherwise the exact line to run. */
export async function ensureDebianPackages(commands) {
  const missing = Object.entries(commands).filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  const line = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) throw new Error(`missing ${missing.join(', ')}; as root run: ${line}`);
  say(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  await run('apt-get', [...lock, 'update'], { env, quiet: true });
  await run('apt-get', [...lock, 'install', '-y', '--no-install-recommends', ...missing], { env, quiet: true });
}

/** This process's hard limit ("Max open files", "Max processes") from /proc/self/limits. */
function hardLimit(label) {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(label));
  const hard = line?.slice(label.length).trim().split(/\s+/)[1];
  if (hard === 'unlimited') return Infinity;
  const n = Number(hard);
  return Number.isFinite(n) && n > 0 ? n : 1024;
}

// runc could not set a higher RLIMIT_NPROC than this on the machines this was measured on,
// whatever `ulimit -Hu` said (docs/operations.md, "Images checked end to end").
const NPROC_MAX = 32768;

/**
 * docker when `docker info` reaches a daemon; else podman (+ buildah, runc) from Debian with its
 * own containers.conf and storage.conf under `dir` (CONTAINERS_CONF / CONTAINERS_STORAGE_CONF,
 * the machine's files are left alone): runc, because crun rejects the cgroup setup of these
 * machines; cgroupfs and file events (no systemd); explicit nofile/nproc limits, because podman's
 * defaults exceed what root may set here.
 */
export async function chooseEngine(dir) {
  if (has('docker') && succeeds('docker', ['info'])) {
    say('engine: docker (a daemon answers `docker info`)');
    return { name: 'docker', cmd: 'docker', env: { ...process.env, DOCKER_BUILDKIT: '1' }, formatFlags: [], readOnlyFlags: ['--read-only'] };
  }
  await ensureDebianPackages({ podman: 'podman', buildah: 'buildah', runc: 'runc' });
  mkdirSync(dir, { recursive: true });
  const nofile = hardLimit('Max open files');
  const nproc = Math.min(hardLimit('Max processes'), NPROC_MAX);
  const conf = join(dir, 'containers.conf');
  const storage = join(dir, 'storage.conf');
  writeFileSync(
    conf,
    [
      '# Written by tools/images-check (pnpm images:check); used through CONTAINERS_CONF only.',
      '[containers]',
      `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  );
  writeFileSync(storage, ['[storage]', 'driver = "overlay"', `graphroot = "${join(dir, 'storage')}"`, `runroot = "${join(dir, 'run')}"`, ''].join('\n'));
  const env = { ...process.env, CONTAINERS_CONF: conf, CONTAINERS_STORAGE_CONF: storage };
  say(`engine: podman (no Docker daemon answers), runtime runc, ulimits nofile=${nofile} nproc=${nproc}`);
  say(`  its own configuration: CONTAINERS_CONF=${conf} CONTAINERS_STORAGE_CONF=${storage}`);
  // --format docker: the OCI format has no HEALTHCHECK and podman drops it silently.
  // --read-only-tmpfs=false: only the chart's volumes are writable, as with readOnlyRootFilesystem.
  return { name: 'podman', cmd: 'podman', env, formatFlags: ['--format', 'docker'], readOnlyFlags: ['--read-only', '--read-only-tmpfs=false'] };
}

export function imageExists(engine, ref) {
  return succeeds(engine.cmd, ['image', 'inspect', ref], engine.env);
}

export async function inspectImage(engine, ref) {
  const [image] = JSON.parse(await run(engine.cmd, ['image', 'inspect', ref], { env: engine.env, quiet: true }));
  return image;
}

export async function inspectContainer(engine, name) {
  const [c] = JSON.parse(await run(engine.cmd, ['container', 'inspect', name], { env: engine.env, quiet: true }));
  return c;
}
