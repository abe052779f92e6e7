#!/usr/bin/env node
// `pnpm check:layers`: reads every import of the TypeScript sources under apps/*/src and
// libs/*/src and fails on an import that runs up the layer order of docs/architecture.md, on
// an import between two folders of the same layer, on a source folder the order does not place,
// on production code importing test code, and on files that import each other in a circle. The order below is that document's, as data; the
// Jest project `tools` runs this check on the repository and on graphs made to fail.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Lowest layer first. An entry of a service's `src/` (a folder, or a file at the top of `src/`)
 * may import entries of lower layers only; entries listed together share a layer and may not
 * import each other.
 */
export const LAYERS = {
  'apps/collect-api/src': [
    ['config'],
    ['storage', 'crypto', 'cache', 'jobs'],
    ['openrosa', 'database'],
    ['wire-formats', 'migrations', 'encryption'],
    ['users'],
    ['auth'],
    ['cas-client'],
    ['oauth2', 'onboarding', 'profiles'],
    ['form-media'],
    ['forms'],
    ['form-encryption', 'api-tokens'],
    ['encrypted-submissions', 'entities'],
    ['submissions'],
    ['datasets'],
    ['media'],
    ['entity-attachments'],
    ['restservices', 'metadata', 'exports', 'briefcase'],
    ['root', 'rate-limit', 'health', 'seed', 'encryption-export'],
    ['entities.ts', 'feature-modules.ts'],
    ['data-source.ts'],
    ['worker.module.ts'],
    ['app.module.ts'],
    ['openapi-document.ts'],
    ['app.ts', 'cli.ts', 'migrate.ts', 'openapi.ts', 'worker-probes.ts'],
    ['main.ts', 'worker.ts'],
  ],
  'apps/cas/src': [
    ['config', 'migrations'],
    ['accounts', 'rate-limit'],
    ['clients'],
    ['oidc'],
    ['interactions', 'cas-api'],
    ['health'],
    ['database', 'feature-modules.ts'],
    ['cli', 'app.module.ts'],
    ['openapi-document.ts'],
    ['app.ts', 'cli.ts', 'migrate.ts', 'openapi.ts'],
    ['main.ts'],
  ],
};

/** The libraries, lowest first; the services sit above every production library. */
export const LIBRARY_LAYERS = [['contracts'], ['platform', 'xlsform'], ['jwt-validation'], ['embedded'], ['testing'], ['runtime']];

/** Test code: production code never imports it (libs/testing is test code as a whole). */
export function isTestCode(path) {
  return (
    /(^|\/)test\//.test(path) ||
    /\.(spec|e2e|test)\.ts$/.test(path) ||
    path.startsWith('libs/testing/') ||
    /^libs\/[^/]+\/src\/testing\//.test(path)
  );
}

const APP_ROOTS = Object.keys(LAYERS);

function rankOf(layers, entry) {
  return layers.findIndex((layer) => layer.includes(entry));
}

/** `apps/collect-api/src/forms/forms.service.ts` → { root: 'apps/collect-api/src', entry: 'forms' }. */
function placeInApp(path) {
  const root = APP_ROOTS.find((r) => path.startsWith(`${r}/`));
  if (!root) return null;
  return { root, entry: path.slice(root.length + 1).split('/')[0] };
}

function libraryOf(path) {
  const m = /^libs\/([^/]+)\//.exec(path);
  return m ? m[1] : null;
}

/**
 * The violations of an import graph: `edges` are `{ from, to }` with repository-relative paths
 * (`to` a path, or `@collect/<lib>` for a library import). Pure, so tests can feed it any graph.
 */
export function checkImports(edges, layers = LAYERS, libraryLayers = LIBRARY_LAYERS) {
  const problems = [];
  const seenUnplaced = new Set();
  for (const { from, to } of edges) {
    if (isTestCode(from)) continue;
    const target = to.startsWith('@collect/') ? `libs/${to.slice('@collect/'.length)}/src/index.ts` : to;
    if (isTestCode(target)) {
      problems.push({ kind: 'test-code', from, to, message: `${from} imports test code ${to}` });
      continue;
    }
    const a = placeInApp(from);
    const b = placeInApp(target);
    if (a && b && a.root === b.root) {
      if (a.entry === b.entry) continue;
      const appLayers = layers[a.root];
      for (const e of [a.entry, b.entry]) {
        if (rankOf(appLayers, e) < 0 && !seenUnplaced.has(`${a.root}/${e}`)) {
          seenUnplaced.add(`${a.root}/${e}`);
          problems.push({ kind: 'unplaced', from, to, message: `${a.root}/${e} has no layer in docs/architecture.md (tools/check-layers.mjs LAYERS)` });
        }
      }
      const ra = rankOf(appLayers, a.entry);
      const rb = rankOf(appLayers, b.entry);
      if (ra < 0 || rb < 0) continue;
      if (rb > ra) problems.push({ kind: 'upward', from, to, message: `${from} (${a.entry}) imports ${to} (${b.entry}), a higher layer` });
      else if (rb === ra) problems.push({ kind: 'sibling', from, to, message: `${from} (${a.entry}) imports ${to} (${b.entry}), a folder of the same layer` });
      continue;
    }
    if (a && b) {
      problems.push({ kind: 'cross-service', from, to, message: `${from} imports another service's source ${to}` });
      continue;
    }
    const la = libraryOf(from);
    const lb = libraryOf(target);
    if (lb && la && la !== lb) {
      const ra = rankOf(libraryLayers, la);
      const rb = rankOf(libraryLayers, lb);
      if (ra < 0 || rb < 0) {
        problems.push({ kind: 'unplaced', from, to, message: `library ${ra < 0 ? la : lb} has no layer in docs/architecture.md (tools/check-layers.mjs LIBRARY_LAYERS)` });
      } else if (rb >= ra) {
        problems.push({ kind: rb === ra ? 'sibling' : 'upward', from, to, message: `${from} (libs/${la}) imports ${to} (libs/${lb}), ${rb === ra ? 'a library of the same layer' : 'a higher library'}` });
      }
    } else if (lb && a && lb === 'runtime') {
      problems.push({ kind: 'upward', from, to, message: `${from} imports the launcher libs/runtime, which sits above the services` });
    } else if (b && la) {
      problems.push({ kind: 'upward', from, to, message: `${from} (libs/${la}) imports service source ${to}` });
    }
  }
  for (const cycle of importCycles(edges)) {
    problems.push({ kind: 'cycle', from: cycle[0], to: cycle[1], message: `import circle: ${[...cycle, cycle[0]].join(' -> ')}` });
  }
  return problems;
}

/**
 * The circles of production files importing each other (type-only imports too): inside one
 * folder the layers allow any import, and a circle there means two files hold one concept
 * between them, whose shared part wants a file of its own. One circle per strongly connected
 * group, as a path through it. Iterative (Tarjan's algorithm with an explicit stack).
 */
export function importCycles(edges) {
  const next = new Map();
  for (const { from, to } of edges) {
    if (isTestCode(from) || to.startsWith('@collect/') || isTestCode(to)) continue;
    if (!next.has(from)) next.set(from, []);
    next.get(from).push(to);
  }
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      const targets = next.get(node) ?? [];
      if (i < targets.length) {
        frame[1]++;
        const target = targets[i];
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) low.set(node, Math.min(low.get(node), index.get(target)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const group = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          group.push(member);
        } while (member !== node);
        if (group.length > 1) groups.push(group);
      }
    }
  }
  return groups.map((group) => pathThrough(group, next));
}

/** A circle through the members of a strongly connected group, from its first member (breadth-first back to it). */
function pathThrough(group, next) {
  const members = new Set(group);
  const start = [...group].sort()[0];
  const cameFrom = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const node = queue.shift();
    for (const target of next.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [];
        for (let at = node; at !== null; at = cameFrom.get(at)) path.unshift(at);
        return path;
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return group;
}

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveRelative(fromFile, spec, repoRoot) {
  const base = resolve(dirname(fromFile), spec);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`, join(base, 'index.ts')];
  const found = candidates.find((c) => {
    try {
      return statSync(c).isFile();
    } catch {
      return false;
    }
  });
  return relative(repoRoot, found ?? candidates[0]).split(sep).join('/');
}

/** Every import (static, `export from`, dynamic `import()`) of the sources under apps/*\/src and libs/*\/src. */
export function readImportGraph(repoRoot) {
  const edges = [];
  const roots = [];
  for (const group of ['apps', 'libs']) {
    for (const name of readdirSync(join(repoRoot, group))) {
      const src = join(repoRoot, group, name, 'src');
      try {
        if (statSync(src).isDirectory()) roots.push(src);
      } catch {
        // a folder without sources
      }
    }
  }
  for (const file of roots.flatMap((r) => walk(r))) {
    const from = relative(repoRoot, file).split(sep).join('/');
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: spec } of importedFiles) {
      if (spec.startsWith('.')) edges.push({ from, to: resolveRelative(file, spec, repoRoot) });
      else if (spec.startsWith('@collect/')) edges.push({ from, to: spec.split('/').slice(0, 2).join('/') });
    }
  }
  return edges;
}

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // An optional argument checks another checkout (a helper's worktree) with this order.
  const edges = readImportGraph(process.argv[2] ? resolve(process.argv[2]) : REPO_ROOT);
  const problems = checkImports(edges);
  for (const p of problems) process.stderr.write(`${p.kind}: ${p.message}\n`);
  process.stdout.write(`check:layers: ${edges.length} imports read, ${problems.length} problem(s)\n`);
  process.exitCode = problems.length ? 1 : 0;
}
