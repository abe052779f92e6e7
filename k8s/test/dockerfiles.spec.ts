import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helm.js';

/**
 * Static checks of docker/*.Dockerfile (a small hadolint-like rule set). There is no Docker daemon
 * on these machines (`docker info`: cannot connect), so the images are not built here; what they
 * ship is built and run by deploy-bundle.spec.ts with the same `pnpm deploy` command.
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

  it('builds in stages from a pinned Node 24 LTS base', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    for (const s of stages) expect(s.from).toBe('${NODE_IMAGE}');
    // A full version, never `latest` or a floating major.
    expect(args.NODE_IMAGE).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
  });

  it('bundles only this service with its production dependencies', () => {
    const build = stages[0];
    const runs = all(build, 'RUN').join('\n');
    expect(runs).toContain('pnpm install --offline --frozen-lockfile');
    expect(runs).toContain(`pnpm --filter ${app} deploy --prod --legacy /out/apps/${app}`);
    // The runtime stage takes only the bundle from the build stage.
    expect(all(runtime, 'COPY')).toEqual([`--from=build --chown=0:0 /out/ /srv/`]);
  });

  it('runs as a non-root numeric user under tini, with a health check', () => {
    const user = all(runtime, 'USER').at(-1)!;
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/); // numeric: runAsNonRoot can verify it
    expect(JSON.parse(all(runtime, 'ENTRYPOINT')[0])).toEqual(['/usr/bin/tini', '--']);
    expect(JSON.parse(all(runtime, 'CMD')[0])).toEqual(['node', `apps/${app}/dist/main.js`]);
    const health = all(runtime, 'HEALTHCHECK')[0];
    expect(health).toContain('/health/live');
    expect(health).toContain(`process.env.${portVar}||${port}`);
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
