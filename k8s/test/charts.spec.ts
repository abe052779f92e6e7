import type { z } from 'zod';
import { casEnvSchema } from '../../apps/cas/src/config/cas-config.js';
import { collectEnvSchema } from '../../apps/collect-api/src/config/collect-config.js';
import { CHARTS, ENVIRONMENTS, extraValues, helm, ofKind, one, render, renderEnv, valuesFile, type ChartName, type Environment, type Manifest } from './helm.js';
import { validateManifest } from './validate.js';

/**
 * Offline checks of both Helm charts for every environment: `helm lint`, `helm template`,
 * Kubernetes schema validation of every rendered object, then the deployment rules of docs/operations.md
 * (probes, non-root, read-only root fs, resources, migrate hook Job, secrets only by reference,
 * CAS_ISSUER never in a Secret, one issuer for non-production and another for production).
 */

const APP: Record<ChartName, { values: 'collectApi' | 'cas'; dir: string; port: number; secretNames: string[] }> = {
  'collect-api': {
    values: 'collectApi',
    dir: 'apps/collect-api',
    port: 3000,
    secretNames: ['DATABASE_URL', 'REDIS_URL', 'COLLECT_SECRET_KEY', 'COLLECT_ADMIN_PASSWORD', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'SHEETS_CLIENT_SECRET', 'CAS_CLIENT_SECRET', 'CAS_ONBOARDING_CLIENT_SECRET', 'METRICS_TOKEN'],
  },
  cas: { values: 'cas', dir: 'apps/cas', port: 4000, secretNames: ['CAS_DATABASE_URL', 'CAS_KEY_ENCRYPTION_KEY', 'CAS_COOKIE_KEYS', 'CAS_KEY_ENCRYPTION_KEY_PREVIOUS'] },
};

const EXPECTED_TAG = '0.1.0';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

function podSpecs(docs: Manifest[]): Array<{ owner: Manifest; pod: Obj }> {
  return [...ofKind(docs, 'Deployment'), ...ofKind(docs, 'Job')].map((owner) => ({ owner, pod: owner.spec.template.spec }));
}

function envOf(container: Obj): Record<string, Obj> {
  return Object.fromEntries((container.env ?? []).map((e: Obj) => [e.name, e]));
}

function schemaKeys(schema: z.ZodType): string[] {
  const s = schema as unknown as { shape?: Record<string, unknown>; in?: z.ZodType };
  if (s.shape) return Object.keys(s.shape);
  if (s.in) return schemaKeys(s.in);
  throw new Error('unexpected schema shape');
}

const cache = new Map<string, Manifest[]>();
function rendered(chart: ChartName, env: Environment): Manifest[] {
  const key = `${chart}:${env}`;
  // The worker Deployment is on by default; set it explicitly so an environment file cannot hide it from these rules.
  if (!cache.has(key)) cache.set(key, renderEnv(chart, env, chart === 'collect-api' ? ['collectApi.worker.enabled=true'] : []));
  return cache.get(key)!;
}

describe.each(CHARTS)('chart %s', (chart) => {
  const app = APP[chart];

  describe.each(ENVIRONMENTS)('values-%s', (env) => {
    it('passes helm lint', () => {
      const res = helm(['lint', `k8s/${chart}`, '--values', valuesFile(env)]);
      expect(res.stderr).toBe('');
      expect(res.stdout).toContain('0 chart(s) failed');
    });

    it('renders objects that validate against the Kubernetes schemas', () => {
      const docs = rendered(chart, env);
      expect(docs.length).toBeGreaterThanOrEqual(5);
      for (const doc of docs) expect(() => validateManifest(doc)).not.toThrow();
      for (const kind of ['Deployment', 'Service', 'ConfigMap', 'Job', 'Ingress']) expect(ofKind(docs, kind).length).toBeGreaterThanOrEqual(1);
    });

    it('renders no Secret and keeps secret variables out of the ConfigMap', () => {
      const docs = rendered(chart, env);
      expect(ofKind(docs, 'Secret')).toEqual([]);
      const data = one(docs, 'ConfigMap').data as Record<string, string>;
      for (const name of app.secretNames) expect(Object.keys(data)).not.toContain(name);
      for (const { pod } of podSpecs(docs)) {
        for (const c of pod.containers) {
          const env = envOf(c);
          for (const name of app.secretNames) {
            // Every secret variable reaches the container, and only as a reference to a Secret key.
            expect(env[name]?.valueFrom?.secretKeyRef?.key).toBe(name);
            expect(env[name].value).toBeUndefined();
          }
        }
      }
    });

    it('runs every pod as non-root with a read-only root filesystem and no capabilities', () => {
      for (const { owner, pod } of podSpecs(rendered(chart, env))) {
        expect([owner.metadata.name, pod.securityContext.runAsNonRoot]).toEqual([owner.metadata.name, true]);
        expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
        expect(pod.automountServiceAccountToken).toBe(false);
        for (const c of pod.containers) {
          expect(c.securityContext).toMatchObject({
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            privileged: false,
            capabilities: { drop: ['ALL'] },
          });
          // Node and the app write only to /tmp, which must therefore be a volume.
          expect(c.volumeMounts.map((m: Obj) => m.mountPath)).toContain('/tmp');
        }
      }
    });

    it('pins the image tag and sets requests and limits on every container', () => {
      for (const { pod } of podSpecs(rendered(chart, env))) {
        for (const c of pod.containers) {
          expect(c.image).toBe(`ghcr.io/collect-platform/${chart}:${EXPECTED_TAG}`);
          for (const kind of ['requests', 'limits']) {
            expect(c.resources[kind].cpu).toBeTruthy();
            expect(c.resources[kind].memory).toBeTruthy();
          }
        }
      }
    });

    it('probes /health/live and /health/ready, and turns start-up migrations off in Deployments', () => {
      for (const dep of ofKind(rendered(chart, env), 'Deployment')) {
        const pod = dep.spec.template.spec;
        for (const c of pod.containers) {
          expect(c.livenessProbe.httpGet).toMatchObject({ path: '/health/live', port: 'http' });
          expect(c.readinessProbe.httpGet).toMatchObject({ path: '/health/ready', port: 'http' });
          expect(c.ports).toContainEqual(expect.objectContaining({ name: 'http', containerPort: app.port }));
          expect(envOf(c).MIGRATIONS_RUN.value).toBe('false');
          // The grace period covers the preStop pause plus the app's own drain time.
          const graceMs = Number(envOf(c).SHUTDOWN_GRACE_MS.value);
          const preStopMs = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(c.lifecycle?.preStop?.exec?.command?.join(' ') ?? '')?.[1] ?? 0);
          expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(graceMs + preStopMs);
          expect(c.envFrom[0].configMapRef.name).toBe(one(rendered(chart, env), 'ConfigMap').metadata.name);
        }
      }
    });

    it('runs migrations in a pre-install/pre-upgrade hook Job with the built migrate entry', () => {
      const job = one(rendered(chart, env), 'Job', '-migrate');
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(job.metadata.annotations?.['helm.sh/hook-delete-policy']).toContain('before-hook-creation');
      const c = job.spec.template.spec.containers[0];
      expect(c.args).toEqual(['node', `${app.dir}/dist/migrate.js`]);
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
      // The hook runs before the ConfigMap exists, so the Job carries the same configuration inline.
      const data = one(rendered(chart, env), 'ConfigMap').data as Record<string, string>;
      for (const [name, value] of Object.entries(data)) if (name !== 'CAS_SEED_FILE') expect([name, envOf(c)[name]?.value]).toEqual([name, value]);
      expect(c.envFrom).toBeUndefined();
    });

    it('selects its pods with the Service, PDB and HPA it renders', () => {
      const docs = rendered(chart, env);
      const deps = ofKind(docs, 'Deployment');
      const svc = one(docs, 'Service');
      const api = deps.filter((d) => Object.entries(svc.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v));
      expect(api).toHaveLength(1);
      for (const pdb of ofKind(docs, 'PodDisruptionBudget')) {
        expect(deps.filter((d) => Object.entries(pdb.spec.selector.matchLabels).every(([k, v]) => d.spec.template.metadata.labels[k] === v))).toHaveLength(1);
      }
      for (const hpa of ofKind(docs, 'HorizontalPodAutoscaler')) {
        const target = one(deps, 'Deployment', hpa.spec.scaleTargetRef.name);
        expect(target.spec.replicas).toBeUndefined(); // the HPA owns the replica count
        expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
      }
      for (const dep of deps) {
        const spread = dep.spec.template.spec.topologySpreadConstraints[0];
        expect(spread.topologyKey).toBe('kubernetes.io/hostname');
        expect(spread.labelSelector.matchLabels).toEqual(dep.spec.selector.matchLabels);
      }
    });
  });

  it('refuses a secret variable in the non-secret env map', () => {
    const name = app.secretNames[0];
    expect(() => renderEnv(chart, 'staging', [`${app.values}.env.${name}=postgres://u:p@db/x`])).toThrow(/holds a secret/);
  });

  it('refuses a missing or `latest` image tag', () => {
    expect(() => render(chart, [], ['global.casIssuer=https://auth.example.org', 'global.casApiUrl=https://cas-api.example.org'])).toThrow(/imageTag.*required/);
    expect(() => renderEnv(chart, 'staging', ['global.imageTag=latest'])).toThrow(/latest/);
  });

  it('lets every variable the service reads be set from values (ConfigMap, explicit env or Secret reference)', () => {
    const keys = schemaKeys(chart === 'cas' ? casEnvSchema : collectEnvSchema);
    const plain = keys.filter((k) => !app.secretNames.includes(k));
    const docs = render(chart, [valuesFile('staging'), extraValues({ [app.values]: { env: Object.fromEntries(plain.map((k) => [k, `v-${k}`])) } })]);
    const data = one(docs, 'ConfigMap').data as Record<string, string>;
    const container = one(docs, 'Deployment', chart === 'collect-api' ? '-api' : '').spec.template.spec.containers[0];
    const env = envOf(container);
    const unreachable = keys.filter((k) => !(k in data) && !(k in env));
    expect(unreachable).toEqual([]);
    // Values given in `env` win over the chart's computed defaults (except those the Deployment pins).
    const pinned = Object.keys(env);
    expect(plain.filter((k) => !pinned.includes(k) && data[k] !== `v-${k}`)).toEqual([]);
  });
});

describe('collect-api chart', () => {
  it('refuses to render production without global.casIssuer (the service would fall back to http://localhost:4000)', () => {
    for (const env of ENVIRONMENTS) expect(() => renderEnv('collect-api', env, ['global.casIssuer='])).toThrow(/global.casIssuer is required/);
    // A non-production NODE_ENV and environment (a local kind cluster) still renders and keeps the service's dev default.
    const docs = renderEnv('collect-api', 'development', ['global.casIssuer=', 'collectApi.env.NODE_ENV=development']);
    expect(one(docs, 'ConfigMap').data).not.toHaveProperty('CAS_ISSUER');
  });

  it('points collect-api at the CAS of its environment group: issuer and cas-api host (ConfigMap, not Secret)', () => {
    const data = one(renderEnv('collect-api', 'production'), 'ConfigMap').data as Record<string, string>;
    expect(data).toMatchObject({ CAS_ISSUER: expect.stringMatching(/^https:\/\//), CAS_API_URL: 'https://cas-api.collect.example.org', CAS_AUDIENCE: 'collect-api', CAS_CLIENT_ID: 'collect-web' });
    expect(data).not.toHaveProperty('CAS_CLIENT_SECRET');
  });

  it('runs the worker as its own Deployment with the worker entry and a long drain', () => {
    const docs = renderEnv('collect-api', 'production', ['collectApi.worker.enabled=true']);
    const worker = one(docs, 'Deployment', '-worker');
    const c = worker.spec.template.spec.containers[0];
    expect(c.args).toEqual(['node', 'apps/collect-api/dist/worker.js']);
    // Probed on the container port: the worker must listen there.
    expect(envOf(c).WORKER_PORT.value).toBe(String(c.ports[0].containerPort));
    // A delivery in flight (at most FORWARD_TIMEOUT_MS, 30 s by default) finishes within the drain.
    expect(Number(envOf(c).SHUTDOWN_GRACE_MS.value)).toBeGreaterThan(2 * 30_000);
    expect(Number(envOf(c).SHUTDOWN_GRACE_MS.value)).toBeGreaterThanOrEqual(60_000);
    expect(worker.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(Number(envOf(c).SHUTDOWN_GRACE_MS.value));
    // Scaled independently: its own HPA, and the Service never routes to it.
    expect(one(docs, 'HorizontalPodAutoscaler', '-worker').spec.scaleTargetRef.name).toBe(worker.metadata.name);
    expect(one(docs, 'Service').spec.selector['app.kubernetes.io/component']).toBe('api');
  });

  it('runs the worker by default in every environment and leaves it out when disabled', () => {
    for (const env of ENVIRONMENTS) {
      expect(ofKind(renderEnv('collect-api', env), 'Deployment').map((d) => d.metadata.name).sort()).toEqual(['collect-api-api', 'collect-api-worker']);
    }
    expect(ofKind(renderEnv('collect-api', 'production', ['collectApi.worker.enabled=false']), 'Deployment').map((d) => d.metadata.name)).toEqual(['collect-api-api']);
  });

  it('serves PUBLIC_BASE_URL as the Ingress host', () => {
    const docs = renderEnv('collect-api', 'production');
    expect(one(docs, 'ConfigMap').data.PUBLIC_BASE_URL).toBe('https://collect.example.org');
    expect(one(docs, 'Ingress').spec.rules.map((r: Obj) => r.host)).toEqual(['collect.example.org']);
  });

  it('renders an optional ServiceMonitor', () => {
    const docs = renderEnv('collect-api', 'staging', ['collectApi.serviceMonitor.enabled=true']);
    const monitor = one(docs, 'ServiceMonitor');
    expect(() => validateManifest(monitor)).not.toThrow();
    // /metrics answers 404 in production without the scrape token, 401 without it in the request.
    expect(monitor.spec.endpoints[0].authorization).toEqual({ type: 'Bearer', credentials: { name: 'collect-api', key: 'METRICS_TOKEN' } });
  });
});

describe('cas chart', () => {
  function issuer(env: Environment): string {
    return one(rendered('cas', env), 'ConfigMap').data.CAS_ISSUER;
  }

  it('shares one issuer between development, staging and pre-production, and gives production its own', () => {
    expect(new Set(['development', 'staging', 'preproduction'].map((e) => issuer(e as Environment))).size).toBe(1);
    expect(issuer('production')).not.toBe(issuer('staging'));
    expect(issuer('production')).toMatch(/^https:\/\//);
  });

  it.each(ENVIRONMENTS)('carries CAS_ISSUER in the ConfigMap and the Job env, never in a Secret (%s)', (env) => {
    const docs = rendered('cas', env);
    expect(ofKind(docs, 'Secret')).toEqual([]);
    for (const { pod } of podSpecs(docs)) {
      for (const c of pod.containers) expect(envOf(c).CAS_ISSUER?.valueFrom).toBeUndefined();
    }
    expect(envOf(one(docs, 'Job').spec.template.spec.containers[0]).CAS_ISSUER.value).toBe(issuer(env));
  });

  it.each(ENVIRONMENTS)('routes the auth host and the cas-api host to the service (%s)', (env) => {
    const docs = rendered('cas', env);
    const rules = one(docs, 'Ingress').spec.rules as Obj[];
    expect(rules.map((r) => r.host)).toEqual([new URL(issuer(env)).hostname, expect.stringMatching(/^cas-api\./)]);
    expect(rules[1].http.paths[0].path).toBe('/api');
  });

  it('mounts the seed Secret and points CAS_SEED_FILE at it', () => {
    const docs = rendered('cas', 'staging');
    expect(one(docs, 'ConfigMap').data.CAS_SEED_FILE).toBe('/etc/cas/seed/seed.json');
    const pod = one(docs, 'Deployment').spec.template.spec;
    expect(pod.volumes.find((v: Obj) => v.name === 'seed').secret.secretName).toBe('cas-seed');
    expect(ofKind(rendered('cas', 'production'), 'ConfigMap')[0].data.CAS_SEED_FILE).toBeUndefined();
  });
});
