import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { freePort, startRedis, startServiceProcess, type RedisHandle, type ServiceProcess } from '@collect/testing';
import { demoXForm } from './forms-fixtures.js';
import { Receiver, until, WORKER_FORWARDING } from './restservices-receiver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

const WORKER = fileURLToPath(new URL('../dist/worker.js', import.meta.url));


/**
 * The real worker process (dist/worker.js) against our own redis-server child, so Redis can be
 * stopped and restarted without disturbing other suites. The API in this process only writes
 * outbox rows; relaying and delivering is the worker's (worker.module.ts).
 */
describe('rest services: worker process crash, drain and Redis restart', () => {
  let redis: RedisHandle;
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;
  const workers: ServiceProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    sut = await startTestCollectApp({ ...WORKER_FORWARDING, REDIS_URL: redis.url });
    rx = await new Receiver().start();
    owner = await createTestUser(sut.app);
  });
  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) await w.stop('SIGKILL');
    await sut.close();
    await rx.close();
    await redis.stop();
  });

  const startWorker = async (extra: Record<string, string> = {}): Promise<ServiceProcess> => {
    const port = await freePort();
    const w = await startServiceProcess(WORKER, {
      ...WORKER_FORWARDING, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: sut.config.DATABASE_URL, REDIS_URL: redis.url, REDIS_PREFIX: sut.config.REDIS_PREFIX,
      FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', WORKER_PORT: String(port), COLLECT_PORT: String(port),
      // These tests prove crash and restart safety, not pacing: the default pace (600 a minute)
      // would spread 1,000 deliveries over 100 s (docs/security.md, "Rate limits, quotas and forwarding input").
      FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE: '0', ...extra,
    }, port);
    workers.push(w);
    return w;
  };
  const exited = (w: ServiceProcess) => new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve({ code: w.child.exitCode, signal: w.child.signalCode });
    w.child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const form = async (idString: string, path: string) => {
    const id = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
    await request(sut.url).post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: id, name: 'generic_json', service_url: `${rx.url}${path}` }).expect(201);
    return id;
  };
  const submitMany = async (idString: string, from: number, count: number) => {
    let next = from;
    const end = from + count;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < end) {
        const i = next++;
        await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name: `n${i}` } }).expect(201);
      }
    }));
  };
  /** submission _id → the X-Delivery-Ids it arrived with. */
  const deliveredTo = (path: string) => {
    const seen = new Map<number, Set<string>>();
    for (const r of rx.to(path)) {
      const id = JSON.parse(r.body.toString())._id as number;
      if (!seen.has(id)) seen.set(id, new Set());
      seen.get(id)!.add(String(r.headers['x-delivery-id']));
    }
    return seen;
  };
  const rowStatuses = async (formId: number) =>
    Object.fromEntries(((await sut.app.get(DataSource).query(
      `SELECT d.status, count(*)::int AS n FROM rest_deliveries d JOIN rest_services s ON s.id = d.service_id WHERE s.form_id = $1 GROUP BY d.status`, [formId],
    )) as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]));

  it('SIGTERM with deliveries in flight: they finish, the worker exits 0 within the grace period, the rest is delivered by the next worker', async () => {
    const formId = await form('drain_form', '/slow');
    rx.script('/slow', [{ status: 200, body: 'slow ok', delayMs: 1500 }]);
    await submitMany('drain_form', 0, 12);
    // Without a worker nothing leaves the outbox: the API process neither relays nor delivers.
    await new Promise((r) => setTimeout(r, 500));
    expect(await rowStatuses(formId)).toEqual({ pending: 12 });
    expect(rx.to('/slow')).toHaveLength(0);
    // The receiver answers after 1.5 s; the send timeout leaves room for a busy machine, so every
    // request in flight ends in its answer, which is what this test is about.
    const w = await startWorker({ FORWARD_CONCURRENCY: '4', SHUTDOWN_GRACE_MS: '60000', FORWARD_TIMEOUT_MS: '30000' });
    // The worker's HTTP surface is its probes and metrics, no API route.
    expect((await fetch(`${w.url}/health/ready`)).status).toBe(200);
    expect(await (await fetch(`${w.url}/metrics`)).text()).toContain('collect_restservice_deliveries_total');
    expect((await fetch(`${w.url}/api/v1/user`, { headers: { Authorization: owner.token } })).status).toBe(404);
    await until('deliveries in flight', () => rx.to('/slow').length >= 4, 20_000);
    w.child.kill('SIGTERM');
    const { code, signal } = await exited(w);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    // Every request the worker had started got its answer before the process went away.
    expect(rx.replied).toBe(rx.to('/slow').length);
    const logged = (await sut.app.get(DataSource).query(`SELECT status, error FROM rest_delivery_attempts a JOIN rest_services s ON s.id = a.service_id WHERE s.form_id = $1`, [formId])) as Array<{ status: string; error: string | null }>;
    expect(logged.length).toBe(rx.to('/slow').length);
    expect(logged.every((l) => l.status === 'success' && l.error === null)).toBe(true);
    expect(rx.to('/slow').length).toBeLessThan(12);

    rx.script('/slow', [{ status: 200, body: 'ok' }]);
    const w2 = await startWorker();
    await until('all 12 delivered', () => deliveredTo('/slow').size === 12, 30_000);
    await until('all rows final', async () => (await rowStatuses(formId)).success === 12);
    for (const ids of deliveredTo('/slow').values()) expect(ids.size).toBe(1);
    await w2.stop('SIGTERM');
  });

  it('1,000 submissions survive a SIGKILLed worker and a Redis restart: all delivered, duplicates only with the same X-Delivery-Id', async () => {
    const formId = await form('bulk_form', '/bulk');
    rx.script('/bulk', [{ status: 200, body: 'ok', delayMs: 5 }]);
    await submitMany('bulk_form', 0, 500);
    const w1 = await startWorker();
    await until('some deliveries', () => rx.to('/bulk').length >= 100, 30_000);
    w1.child.kill('SIGKILL');
    await exited(w1);
    const beforeCrash = deliveredTo('/bulk').size;
    expect(beforeCrash).toBeLessThan(500);

    await submitMany('bulk_form', 500, 500);
    // Jobs now in Redis die with it (no persistence); the outbox rows do not.
    const port = redis.port;
    await redis.stop();
    redis = await startRedis({ port });
    await startWorker();
    await until('all 1000 delivered', () => deliveredTo('/bulk').size === 1000, 90_000);
    await until('all rows final', async () => (await rowStatuses(formId)).success === 1000, 30_000);
    expect(await rowStatuses(formId)).toEqual({ success: 1000 });
    const seen = deliveredTo('/bulk');
    for (const ids of seen.values()) expect(ids.size).toBe(1);
    const all = rx.to('/bulk').length;
    expect(all).toBeGreaterThanOrEqual(1000);
    // Its own waits add up to 150 s beyond starting and submitting; Jest's default 60 s ended it first on a busy 2-core machine.
  }, 240_000);
});
