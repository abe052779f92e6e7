// pnpm images:check: builds both images from docker/*.Dockerfile, then starts them as the charts
// would (read-only root, non-root user, the charts' environment) against real PostgreSQL and
// Redis, and prints one line per container (docs/operations.md, "Images checked end to end").
// Exit 0 only when every container answers /health/ready and reports healthy.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startPostgres, startRedis } from '../../libs/embedded/dist/index.js';
import { baseImage } from './base.mjs';
import { renderChart, workload } from './chart.mjs';
import { chooseEngine, inspectContainer, inspectImage, run, say } from './engine.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIR = process.env.IMAGES_CHECK_DIR ?? '/var/tmp/collect-platform/images-check';
const REGISTRY = 'localhost/collect-platform';
const APPS = ['cas', 'collect-api'];

const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(0)} s`;
const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;

/** BUILD_CA_FILE, else the CA file Node is already told about (NODE_EXTRA_CA_CERTS), else none. */
function buildCaFile() {
  for (const [name, file] of [['BUILD_CA_FILE', process.env.BUILD_CA_FILE], ['NODE_EXTRA_CA_CERTS', process.env.NODE_EXTRA_CA_CERTS]]) {
    if (!file) continue;
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) throw new Error(`${name}=${file} is not a file`);
    say(`extra CA for the build: ${file} (${name}), passed as the build secret build_ca`);
    return file;
  }
  return undefined;
}

function imageTag() {
  const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: REPO, encoding: 'utf8' }).trim() !== '';
  return dirty ? `${sha}-dirty` : sha;
}

/**
 * Two passes per image: the stages that download (`deps`, `runtime-base`) with the network, then
 * the whole file with --network=none, which takes those stages from the layer cache: a step of
 * `build` or `runtime` that reaches for the network fails the build.
 */
async function buildImage(engine, app, { base, tag, caFile }) {
  const ref = `${REGISTRY}/${app}:${tag}`;
  const common = ['build', ...engine.formatFlags, '--build-arg', `NODE_IMAGE=${base}`, '-f', `docker/${app}.Dockerfile`, ...(caFile ? ['--secret', `id=build_ca,src=${caFile}`] : [])];
  const started = Date.now();
  const opts = { env: engine.env, quiet: !process.env.IMAGES_CHECK_VERBOSE };
  process.chdir(REPO);
  for (const target of ['deps', 'runtime-base']) await run(engine.cmd, [...common, '--target', target, '.'], opts);
  await run(engine.cmd, [...common, '--network=none', '-t', ref, '.'], opts);
  const image = await inspectImage(engine, ref);
  const health = image.Config?.Healthcheck ?? image.Healthcheck; // docker has it in Config, podman beside it
  if (!health?.Test?.length) throw new Error(`${ref} has no HEALTHCHECK (built in a format that drops it?)`);
  if (!/^[1-9]\d*:[1-9]\d*$/.test(image.Config?.User ?? '')) throw new Error(`${ref} runs as "${image.Config?.User}", not a numeric non-root user`);
  say(`built ${ref} in ${seconds(started)}: ${mb(image.Size)} (image inspect), user ${image.Config.User}, HEALTHCHECK kept`);
  return { ref, size: image.Size };
}

function runFlags(engine, name, spec, env) {
  const flags = ['run', '--name', name, '--network', 'host', '--user', spec.user];
  if (spec.readOnlyRoot) flags.push(...engine.readOnlyFlags);
  if (spec.dropAll) flags.push('--cap-drop', 'ALL');
  if (spec.noNewPrivileges) flags.push('--security-opt', 'no-new-privileges');
  for (const path of spec.writable) flags.push('--tmpfs', `${path}:rw,mode=1777`);
  for (const [k, v] of Object.entries({ ...spec.env, ...env })) flags.push('--env', `${k}=${v}`);
  return flags;
}

async function waitReady(port, timeoutMs = 90_000) {
  const until = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(3000) });
      last = `${res.status} ${await res.text()}`;
      if (res.ok) return { ok: true, status: res.status };
    } catch (err) {
      last = String(err?.cause?.code ?? err);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { ok: false, status: last };
}

/** The image's own HEALTHCHECK: run at once with podman; docker runs it on its interval, so wait for it. */
async function healthStatus(engine, name) {
  if (engine.name === 'podman') {
    for (let i = 0; i < 5; i++) {
      try {
        await run(engine.cmd, ['healthcheck', 'run', name], { env: engine.env, quiet: true });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }
  const until = Date.now() + 100_000;
  for (;;) {
    const state = (await inspectContainer(engine, name)).State;
    const status = state.Health?.Status ?? state.Healthcheck?.Status ?? 'none';
    if (status !== 'starting' || Date.now() > until) return status;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function main() {
  const t0 = Date.now();
  let engine;
  const started = { containers: [], stops: [] };
  const cleanup = async () => {
    for (const name of started.containers.reverse()) await run(engine?.cmd ?? 'true', ['rm', '-f', '-t', '5', name], { env: engine?.env, quiet: true }).catch(() => {});
    for (const stop of started.stops.reverse()) await stop().catch(() => {});
    started.containers = [];
    started.stops = [];
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => cleanup().finally(() => process.exit(130)));

  const lines = [];
  try {
    engine = await chooseEngine(DIR);
    const caFile = buildCaFile();
    const base = await baseImage(engine, { repo: REPO, dir: DIR, caFile });
    const tag = imageTag();
    const tBuild = Date.now();
    const built = {};
    for (const app of APPS) built[app] = await buildImage(engine, app, { base, tag, caFile });
    say(`both images built in ${seconds(tBuild)}`);

    const pg = await startPostgres();
    started.stops.push(() => pg.stop());
    const redis = await startRedis();
    started.stops.push(() => redis.stop());
    say(`PostgreSQL on 127.0.0.1:${pg.port} (libs/embedded), Redis on 127.0.0.1:${redis.port}`);

    const [casPort, apiPort, workerPort] = [await freePort(), await freePort(), await freePort()];
    const secrets = {
      CAS_DATABASE_URL: await pg.createDatabase('images_check_cas'),
      CAS_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      CAS_COOKIE_KEYS: `${randomBytes(24).toString('hex')},${randomBytes(24).toString('hex')}`,
      DATABASE_URL: await pg.createDatabase('images_check_collect'),
      REDIS_URL: redis.url,
      COLLECT_SECRET_KEY: randomBytes(32).toString('hex'),
      // Required in production while CAS sign-in is on (the development values turn it on).
      CAS_CLIENT_SECRET: randomBytes(24).toString('hex'),
    };
    // No seed Secret here; the charts must render with the tags just built.
    const cas = renderChart(REPO, 'cas', { registry: REGISTRY, tag, set: ['cas.seed.secretName='] });
    const collect = renderChart(REPO, 'collect-api', { registry: REGISTRY, tag });
    const specs = {
      'cas migrate': workload(cas, 'Job', 'migrate', secrets),
      cas: workload(cas, 'Deployment', 'server', secrets),
      'collect-api migrate': workload(collect, 'Job', 'migrate', secrets),
      'collect-api worker': workload(collect, 'Deployment', 'worker', secrets),
      'collect-api api': workload(collect, 'Deployment', 'api', secrets),
    };
    for (const [what, spec] of Object.entries(specs)) {
      const app = what.split(' ')[0];
      if (spec.image !== built[app].ref) throw new Error(`helm template renders ${what} with ${spec.image}, not ${built[app].ref}`);
      if (!spec.runAsNonRoot || spec.user.startsWith('0:')) throw new Error(`${what}: the chart does not run it as a non-root user`);
    }
    say(`helm template of both charts renders the tag ${tag}`);
    // Host network (no container network needed here): each service gets a free port on 127.0.0.1.
    // The worker gets the API's COLLECT_PORT too, as from the one ConfigMap, and starts first:
    // its health check passes only if it probes its own WORKER_PORT.
    const ports = {
      cas: { CAS_PORT: String(casPort), CAS_HOST: '127.0.0.1' },
      'collect-api': { COLLECT_PORT: String(apiPort), COLLECT_HOST: '127.0.0.1' },
    };
    const name = (what) => `images-check-${process.pid}-${what.replace(' ', '-')}`;

    for (const what of ['cas migrate', 'collect-api migrate']) {
      const spec = specs[what];
      const times = [];
      for (let i = 0; i < 2; i++) {
        const t = Date.now();
        const n = `${name(what)}-${i + 1}`;
        started.containers.push(n);
        await run(engine.cmd, [...runFlags(engine, n, spec, ports[what.split(' ')[0]]), spec.image, ...spec.args], { env: engine.env, quiet: true });
        await run(engine.cmd, ['rm', '-f', n], { env: engine.env, quiet: true });
        times.push(seconds(t));
      }
      lines.push(`${what.padEnd(20)} exit 0 twice (${times.join(', ')})`);
      say(lines.at(-1));
    }

    const services = [
      ['cas', casPort, {}],
      ['collect-api worker', workerPort, { WORKER_PORT: String(workerPort) }],
      ['collect-api api', apiPort, {}],
    ];
    let allOk = true;
    for (const [what, port, extra] of services) {
      const spec = specs[what];
      const n = name(what);
      started.containers.push(n);
      const flags = runFlags(engine, n, spec, { ...ports[what.split(' ')[0]], ...extra });
      await run(engine.cmd, [flags[0], '-d', ...flags.slice(1), spec.image, ...spec.args], { env: engine.env, quiet: true });
      const ready = await waitReady(port);
      const health = await healthStatus(engine, n);
      const c = await inspectContainer(engine, n);
      const ok = ready.ok && health === 'healthy';
      allOk &&= ok;
      const ro = c.HostConfig?.ReadonlyRootfs ? 'read-only root' : 'WRITABLE root';
      lines.push(`${what.padEnd(20)} /health/ready ${ready.status}  health check ${health}  user ${c.Config?.User}  ${ro}  port ${port}`);
      say(lines.at(-1));
      if (!ok) {
        const logs = await run(engine.cmd, ['logs', '--tail', '30', n], { env: engine.env, quiet: true }).catch((e) => String(e));
        process.stderr.write(`--- ${what} log ---\n${logs}\n`);
      }
    }
    await cleanup();
    say(`sizes (image inspect): ${APPS.map((a) => `${a} ${mb(built[a].size)}`).join(', ')}; total ${seconds(t0)}`);
    process.stdout.write(`\n${lines.join('\n')}\n`);
    process.exitCode = allOk ? 0 : 1;
    if (!allOk) say('FAILED: not every container answered and reported healthy');
  } catch (err) {
    process.stderr.write(`[images:check] FAILED: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

await main();
