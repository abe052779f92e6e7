import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helm.js';

/**
 * Static checks of docker/*.Dockerfile (a small hadolint-like rule set). Building and starting the
 * images takes minutes, so `pnpm images:check` does it outside the test suite (docs/operations.md,
 * "Images checked end to end"); deploy-bundle.spec.ts runs what they ship with the same `pnpm deploy`.
 */

interface Instruction {
  op: string;
  args: string;
}

interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

function parse(file: string): { args: Record<string, string>; stages: Stage[] } {
  const text = readFileSync(file, 'utf8').replace(/\\\n/g, ' ');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, rest] = /^(\S+)\s*(.*)$/.exec(line)!;
    const upper = op.toUpperCase();
    if (upper === 'FROM') {
      const [, from, name] = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(rest)!;
      stages.push({ from, name, instructions: [] });
    } else if (stages.length === 0 && upper === 'ARG') {
      const [k, v] = rest.split('=');
      args[k] = v;
    } else {
      stages.at(-1)!.instructions.push({ op: upper, args: rest });
    }
  }
  return { args, stages };
}

function all(stage: Stage, op: string): string[] {
  return stage.instructions.filter((i) => i.op === op).map((i) => i.args);
}

describe.each([
  { app: 'collect-api', port: 3000, portVar: 'COLLECT_PORT' },
  { app: 'cas', port: 4000, portVar: 'CAS_PORT' },
])('docker/$app.Dockerfile', ({ app, port, portVar }) => {
  const file = join(REPO, 'docker', `${app}.Dockerfile`);
  const { args, stages } = parse(file);
  const runtime = stages.at(-1)!;
  const stage = (name: string) => stages.find((s) => s.name === name)!;

  it('builds in stages from a pinned Node 24 LTS base', () => {
    expect(stages.map((s) => [s.name, s.from])).toEqual([
      ['deps', '${NODE_IMAGE}'],
      ['build', 'deps'],
      ['runtime-base', '${NODE_IMAGE}'],
      ['runtime', 'runtime-base'],
    ]);
    // A full version, never `latest` or a floating major.
    expect(args.NODE_IMAGE).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
  });

  it('bundles only this service with its production dependencies, without install scripts that download', () => {
    const runs = all(stage('build'), 'RUN').join('\n');
    // --ignore-scripts: the `node` devDependency's install script downloads a Node binary the image never uses.
    expect(all(stage('deps'), 'RUN').join('\n')).toContain('pnpm fetch --ignore-scripts');
    expect(runs).toContain('pnpm install --offline --frozen-lockfile --ignore-scripts');
    expect(runs).toContain(`pnpm --filter ${app} deploy --prod --legacy --offline /out/apps/${app}`);
    // The runtime stage takes only the bundle from the build stage.
    expect(all(runtime, 'COPY')).toEqual([`--from=build --chown=0:0 /out/ /srv/`]);
  });

  it('downloads only in the deps stages and copies every workspace manifest there', () => {
    // `pnpm deploy --legacy --offline` resolves against the metadata that the deps stage's resolution of all manifests fills.
    const copied = all(stage('deps'), 'COPY').join(' ');
    const manifests = ['apps', 'libs'].flatMap((dir) => readdirSync(join(REPO, dir)).filter((p) => existsSync(join(REPO, dir, p, 'package.json'))).map((p) => `${dir}/${p}/package.json`));
    for (const m of manifests) expect(copied).toContain(m);
    expect(all(stage('deps'), 'RUN').join('\n')).toContain('pnpm install --resolution-only --no-frozen-lockfile --ignore-scripts');
  });

  it('takes an extra CA only as a build secret, in stages that are not shipped', () => {
    const secretRuns = stages.flatMap((s) => all(s, 'RUN').filter((r) => r.includes('--mount=')).map((r) => [s.name, r] as const));
    expect(secretRuns.length).toBeGreaterThan(0);
    for (const [name, run] of secretRuns) {
      expect(name).toBe('deps');
      expect(run).toMatch(/^--mount=type=secret,id=build_ca,required=false /);
    }
    expect(stages.flatMap((s) => [...all(s, 'COPY'), ...all(s, 'ADD')]).join(' ')).not.toMatch(/\.(crt|pem)\b/);
  });

  it('says to build in the docker format, which keeps HEALTHCHECK', () => {
    expect(readFileSync(file, 'utf8')).toContain(`podman build --format docker -f docker/${app}.Dockerfile`);
  });

  it('runs as a non-root numeric user under tini, with a health check on its own port', () => {
    const user = all(runtime, 'USER').at(-1)!;
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/); // numeric: runAsNonRoot can verify it
    expect(JSON.parse(all(runtime, 'ENTRYPOINT')[0])).toEqual(['/usr/bin/tini', '--']);
    expect(JSON.parse(all(runtime, 'CMD')[0])).toEqual(['node', `apps/${app}/dist/main.js`]);
    const health = all(runtime, 'HEALTHCHECK')[0];
    expect(health).toContain('/health/live');
    expect(health).toContain(`process.env.${portVar}||${port}`);
    if (app === 'collect-api') {
      // The worker listens on WORKER_PORT (default 3001, collect-config.ts): its check must probe that.
      expect(health).toContain('process.env.WORKER_PORT||3001');
      expect(health).toContain('dist/worker.js');
    }
    expect(all(runtime, 'EXPOSE')).toEqual([String(port)]);
  });

  it('keeps apt layers small and writes nothing outside its volumes', () => {
    for (const s of stages) {
      for (const run of all(s, 'RUN').filter((r) => r.includes('apt-get install'))) {
        expect(run).toContain('--no-install-recommends');
        expect(run).toContain('rm -rf /var/lib/apt/lists/*');
      }
    }
    expect(JSON.parse(all(runtime, 'VOLUME')[0])).toContain('/tmp');
    // The chart's readOnlyRootFilesystem leaves only its mounted volumes writable.
    expect(all(runtime, 'ENV').join(' ')).toContain('NODE_ENV=production');
  });

  it('lets the service give back its start-up memory and bounds the young generation', () => {
    // releaseStartUpMemory (libs/platform) needs gc(); the young generation may grow under load only (docs/operations.md, "Images").
    const options = /NODE_OPTIONS="([^"]*)"/.exec(all(runtime, 'ENV').join(' '))?.[1]?.split(' ') ?? [];
    expect(options).toContain('--expose-gc');
    expect(options.some((o) => /^--max-semi-space-size=\d+$/.test(o))).toBe(true);
  });

  it('names entries that the workspace build produces', () => {
    for (const entry of ['main.js', 'migrate.js']) expect(existsSync(join(REPO, 'apps', app, 'dist', entry))).toBe(true);
  });
});

describe('.dockerignore', () => {
  it('keeps local installs, build output, git data and secrets out of the build context', () => {
    const lines = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['.git', '**/node_modules', '**/dist', '**/.data', '.env']) expect(lines).toContain(entry);
  });
});
