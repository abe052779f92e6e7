import http from 'node:http';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { freePort, startServiceProcess, type ServiceProcess } from '@collect/testing';
import { demoXForm } from './forms-fixtures.js';
import { Receiver, until } from './restservices-receiver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

const WORKER = fileURLToPath(new URL('../dist/worker.js', import.meta.url));

const FAST = {
  FORWARD_BACKOFF_BASE_MS: '50',
  FORWARD_BACKOFF_FACTOR: '2',
  FORWARD_MAX_ATTEMPTS: '20',
  FORWARD_RELAY_INTERVAL_MS: '100',
  FORWARD_TIMEOUT_MS: '3000',
  FORWARD_LEASE_MS: '5000',
  FORWARD_CONCURRENCY: '16',
};

/**
 * A destination that enforces its own quota the way flow-start and sheet APIs do: more than
 * `allowed` requests within any `windowMs` → 429. Its answers and arrival times are kept.
 */
class QuotaReceiver {
  readonly arrivals: number[] = [];
  readonly ids: number[] = [];
  tooMany = 0;
  readonly refusedAt: number[] = [];
  url = '';
  private server!: http.Server;

  constructor(private readonly allowed: number, private readonly windowMs: number) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = Date.now();
        const recent = this.arrivals.filter((t) => t > now - this.windowMs).length;
        if (recent >= this.allowed) {
          this.tooMany++;
          this.refusedAt.push(now);
          res.writeHead(429, { 'Retry-After': '1' }).end('quota');
          return;
        }
        this.arrivals.push(now);
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { extra?: { _id?: number } };
        this.ids.push(Number(body.extra?._id));
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  /** The most arrivals within any window of `ms`. */
  maxIn(ms: number): number {
    const a = [...this.arrivals].sort((x, y) => x - y);
    let best = 0;
    for (let i = 0, j = 0; i < a.length; i++) {
      while (a[i] - a[j] >= ms) j++;
      best = Math.max(best, i - j + 1);
    }
    return best;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Destination care (docs/restservices.md, "Limits"): the rate limit shared by worker
 * processes, Retry-After holding a destination back.
 */
describe('rest services: destination limits', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  const workers: ServiceProcess[] = [];

  beforeAll(async () => {
    sut = await startTestCollectApp(FAST);
    owner = await createTestUser(sut.app);
  });
  afterAll(async () => {
    for (const w of workers) await w.stop('SIGTERM').catch(() => undefined);
    await sut.close();
  });

  const api = () => request(sut.url);
  const startWorker = async (): Promise<ServiceProcess> => {
    const port = await freePort();
    const w = await startServiceProcess(WORKER, {
      ...FAST, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: sut.config.DATABASE_URL, REDIS_URL: sut.config.REDIS_URL, REDIS_PREFIX: sut.config.REDIS_PREFIX,
      FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', WORKER_PORT: String(port), COLLECT_PORT: String(port),
    }, port);
    workers.push(w);
    return w;
  };
  const newForm = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const submitMany = async (idString: string, count: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < count) {
        const i = next++;
        await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name: `n${i}` } }).expect(201);
      }
    }));
  };

  it('a burst of 500 to a messaging service limited to 3000/min, sent by two workers: every one delivered once, paced, no 429 and no retry', async () => {
    const perMinute = 3000;
    const perSecond = perMinute / 60;
    const burst = Math.ceil(perMinute / 600);
    // The receiver's quota: the limit over any 2 s, plus the burst and a tenth for timer jitter and pauses of either
    // process on a loaded machine (the receiver shares the test's event loop); an unpaced run exceeds it many times over.
    const allowed = Math.ceil(perSecond * 2 * 1.1) + burst;
    const rx = await new QuotaReceiver(allowed, 2000).start();
    try {
      const formId = await newForm('burst');
      const svc = (await api().post('/api/v1/restservices').set('Authorization', owner.token)
        .send({ xform: formId, name: 'messaging', service_url: `${rx.url}/flow`, auth_token: 'tok', flow_uuid: 'f-1', contacts: 'a', rate_limit_per_minute: perMinute }).expect(201)).body;
      expect(svc.effective_rate_limit_per_minute).toBe(perMinute);
      // No worker yet: the 500 wait in the outbox and on the queue, then two workers take them at once.
      await submitMany('burst', 500);
      await Promise.all([startWorker(), startWorker()]);
      await until('500 delivered', () => rx.ids.length >= 500, 120_000);
      expect(new Set(rx.ids).size).toBe(500);
      const t0 = Math.min(...rx.arrivals);
      if (rx.tooMany) console.log(`429 at ${rx.refusedAt.map((t) => t - t0).join(',')}; arrivals ${[...rx.arrivals].sort((a, b) => a - b).map((t) => t - t0).join(',')}`);
      expect(rx.tooMany).toBe(0);
      const spanMs = Math.max(...rx.arrivals) - Math.min(...rx.arrivals);
      // 500 at 50/s after a burst of 5: at least 9.9 s.
      expect(spanMs).toBeGreaterThanOrEqual(((500 - burst) / perSecond) * 1000 * 0.97);
      expect(rx.maxIn(2000)).toBeLessThanOrEqual(allowed);
      const log = (await sut.app.get(DataSource).query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE status_code = 429)::int AS too_many, count(*) FILTER (WHERE status <> 'success')::int AS not_ok FROM rest_delivery_attempts WHERE service_id = $1`, [svc.id],
      )) as Array<{ n: number; too_many: number; not_ok: number }>;
      expect(log[0]).toEqual({ n: 500, too_many: 0, not_ok: 0 });
      console.log(`burst: 500 in ${spanMs} ms (${((500 / spanMs) * 1000).toFixed(1)}/s, limit ${perSecond}/s), max ${rx.maxIn(1000)} in any second and ${rx.maxIn(2000)} in any 2 s (quota ${allowed}), 0 × 429`);
    } finally {
      await rx.close();
      for (const w of workers.splice(0)) await w.stop('SIGTERM');
    }
  }, 240_000);

  it("a Retry-After holds back every request to the destination, not only the one it answered", async () => {
    const rx = await new Receiver().start();
    try {
      rx.script('/busy', [{ status: 429, headers: { 'Retry-After': '2' }, body: 'slow down' }, { status: 200, body: 'ok' }]);
      const formId = await newForm('retry_after');
      await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: `${rx.url}/busy` }).expect(201);
      await startWorker();
      await submitMany('retry_after', 1);
      await until('the 429', () => rx.to('/busy').length === 1);
      const answeredAt = rx.to('/busy')[0].at;
      await submitMany('retry_after', 5);
      await until('all six delivered', () => rx.to('/busy').length === 7, 30_000);
      // Nothing reached the destination before its Retry-After ran out (2 s, less a little for clock reading).
      for (const r of rx.to('/busy').slice(1)) expect(r.at - answeredAt).toBeGreaterThanOrEqual(1_950);
    } finally {
      await rx.close();
      for (const w of workers.splice(0)) await w.stop('SIGTERM');
    }
  }, 120_000);
});

/**
 * Auto-disable (docs/restservices.md, "Auto-disable") with a window of 0.001 h (3.6 s) and a
 * check every 200 ms: the clock is real, the window small.
 */
describe('rest services: auto-disable and re-enable', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;

  beforeAll(async () => {
    sut = await startTestCollectApp({
      ...FAST, FORWARD_DELIVER_IN_PROCESS: 'true', FORWARD_BACKOFF_MAX_MS: '400', FORWARD_DISABLE_AFTER_HOURS: '0.001', FORWARD_DISABLE_CHECK_INTERVAL_MS: '200',
    });
    owner = await createTestUser(sut.app);
    rx = await new Receiver().start();
  });
  afterAll(async () => {
    await sut.close();
    await rx.close();
  });

  const api = () => request(sut.url);
  const db = () => sut.app.get(DataSource);
  const service = async (pk: number) => (await api().get(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).expect(200)).body;
  const deliveredIds = (path: string) => new Set(rx.to(path).filter((r) => r.body.length).map((r) => JSON.parse(r.body.toString())._id as number));

  it('a receiver down for longer than the window switches its service off with a reason; active: true delivers the backlog', async () => {
    rx.script('/down', [{ status: 503, body: 'down' }]);
    // Fails twice, well inside the window, then answers: stays on.
    rx.script('/blip', [{ status: 503, body: 'x' }, { status: 503, body: 'x' }, { status: 200, body: 'ok' }]);
    const formId = (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('down')), 'form.xml').expect(201)).body.formid as number;
    const down = (await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: `${rx.url}/down` }).expect(201)).body;
    const blip = (await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: `${rx.url}/blip` }).expect(201)).body;
    for (const name of ['a', 'b', 'c']) await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'down', submission: { name } }).expect(201);
    const firstFailure = await until('the first failure', () => rx.to('/down')[0]?.at);

    const off = await until('the service switched off', async () => { const s = await service(down.id); return !s.active && s; }, 30_000);
    const offAt = Date.now();
    expect(offAt - firstFailure).toBeGreaterThanOrEqual(3_600);
    expect(off.inactive_reason).toMatch(/^Every delivery attempt failed for 0\.001 hours \(since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); PATCH "active": true resumes its pending deliveries\.$/);
    expect(off.success_rate_24h).toBe(0);
    expect((await service(blip.id)).active).toBe(true);
    expect(deliveredIds('/blip').size).toBe(3);

    // Off: no further attempts; the deliveries wait (none given up).
    await new Promise((r) => setTimeout(r, 1_000));
    const sent = rx.to('/down').length;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(rx.to('/down').length).toBe(sent);
    const open = (await db().query(`SELECT status, count(*)::int AS n FROM rest_deliveries WHERE service_id = $1 GROUP BY status`, [down.id])) as Array<{ status: string; n: number }>;
    expect(open.every((r) => ['pending', 'retrying'].includes(r.status))).toBe(true);
    expect(open.reduce((n, r) => n + r.n, 0)).toBe(3);
    // A submission made while it is off is not recorded for it.
    await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'down', submission: { name: 'while-off' } }).expect(201);

    // The receiver is back; re-enabling sends the backlog, and the window starts again.
    rx.script('/down', [{ status: 200, body: 'ok' }]);
    const on = (await api().patch(`/api/v1/restservices/${down.id}`).set('Authorization', owner.token).send({ active: true }).expect(200)).body;
    expect(on).toMatchObject({ active: true, inactive_reason: null });
    const okAfter = () => rx.to('/down').filter((r) => r.at >= offAt);
    await until('the backlog delivered', () => okAfter().length >= 3, 30_000);
    const ids = new Set(okAfter().map((r) => JSON.parse(r.body.toString()).name as string));
    expect(ids).toEqual(new Set(['a', 'b', 'c']));
    await until('every row final', async () => ((await db().query(`SELECT count(*)::int AS n FROM rest_deliveries WHERE service_id = $1 AND status = 'success'`, [down.id])) as Array<{ n: number }>)[0].n === 3);
    await new Promise((r) => setTimeout(r, 500));
    expect((await service(down.id)).active).toBe(true);
  }, 120_000);

  it('FORWARD_DISABLE_AFTER_HOURS must be a number from 0 to 8760', async () => {
    const { loadCollectConfig } = await import('../src/config/collect-config.js');
    expect(loadCollectConfig({ FORWARD_DISABLE_AFTER_HOURS: '0.5' }).FORWARD_DISABLE_AFTER_HOURS).toBe(0.5);
    expect(loadCollectConfig({}).FORWARD_DISABLE_AFTER_HOURS).toBe(24);
    for (const bad of ['-1', 'x', '9000']) expect(() => loadCollectConfig({ FORWARD_DISABLE_AFTER_HOURS: bad })).toThrow(/FORWARD_DISABLE_AFTER_HOURS/);
  });
});

describe('rest services: re-enable after attempts ran out', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;

  beforeAll(async () => {
    sut = await startTestCollectApp({
      ...FAST, FORWARD_DELIVER_IN_PROCESS: 'true', FORWARD_MAX_ATTEMPTS: '2', FORWARD_DISABLE_AFTER_HOURS: '0.0005', FORWARD_DISABLE_CHECK_INTERVAL_MS: '200',
    });
    owner = await createTestUser(sut.app);
    rx = await new Receiver().start();
  });
  afterAll(async () => {
    await sut.close();
    await rx.close();
  });

  it('deliveries that failed for good during the outage go out on re-enable; one the receiver refused (400) stays failed', async () => {
    const api = () => request(sut.url);
    rx.script('/gone-down', [{ status: 400, body: 'bad' }, { status: 502, body: 'down' }]);
    const formId = (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('exhausted')), 'form.xml').expect(201)).body.formid as number;
    const svc = (await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: `${rx.url}/gone-down` }).expect(201)).body;
    await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'exhausted', submission: { name: 'refused' } }).expect(201);
    await until('the refusal', () => rx.to('/gone-down').length === 1);
    for (const name of ['x', 'y']) await api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'exhausted', submission: { name } }).expect(201);
    const failed = async () => ((await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM rest_deliveries WHERE service_id = $1 AND status = 'failed'`, [svc.id])) as Array<{ n: number }>)[0].n;
    await until('all three failed', async () => (await failed()) === 3);
    await until('switched off', async () => !(await api().get(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token)).body.active, 30_000);
    rx.script('/gone-down', [{ status: 200, body: 'ok' }]);
    await api().patch(`/api/v1/restservices/${svc.id}`).set('Authorization', owner.token).send({ active: true }).expect(200);
    await until('x and y delivered', () => rx.to('/gone-down').filter((r) => ['x', 'y'].includes(JSON.parse(r.body.toString()).name)).length >= 6);
    await until('two successes', async () => ((await sut.app.get(DataSource).query(`SELECT count(*)::int AS n FROM rest_deliveries WHERE service_id = $1 AND status = 'success'`, [svc.id])) as Array<{ n: number }>)[0].n === 2);
    expect(await failed()).toBe(1);
    expect(rx.to('/gone-down').filter((r) => JSON.parse(r.body.toString()).name === 'refused')).toHaveLength(1);
  }, 60_000);
});

