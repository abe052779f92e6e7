import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { freePort, freshRedisPrefix, freshTestDatabase, sharedRedisUrl, startServiceProcess, stopChild, trackChild, waitFor } from '@collect/testing';
import { runMigrations } from '../src/data-source.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../dist/worker.js', import.meta.url));

describe('collect-api foundation', () => {
  let sut: TestCollectApp;

  beforeAll(async () => {
    sut = await startTestCollectApp();
  });
  afterAll(() => sut.close());

  it('answers /health/live and /health/ready with JSON naming postgres and redis', async () => {
    await request(sut.url).get('/health/live').expect(200).expect('content-type', /json/);
    const ready = await request(sut.url).get('/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
    expect(Object.keys(ready.body.checks).sort()).toEqual(['database', 'redis']);
  });

  it('turns an unknown route into 404 {"detail": "Not found."}', async () => {
    const res = await request(sut.url).get('/api/v1/no-such-thing').expect(404);
    expect(res.body).toEqual({ detail: 'Not found.' });
    await request(sut.url).post('/nowhere').send({}).expect(404, { detail: 'Not found.' });
  });

  it('answers malformed JSON with 400 and a detail, not a 500', async () => {
    const res = await request(sut.url).post('/api/v1').set('content-type', 'application/json').send('{"a":').expect(400);
    expect(res.body).toEqual({ detail: 'JSON parse error.' });
  });

  it('serves the OpenAPI document at /api/docs', async () => {
    const doc = await request(sut.url).get('/api/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    await request(sut.url).get('/api/docs').expect(200).expect('content-type', /html/);
  });

  it('applies migrations to an empty database and a second run applies nothing', async () => {
    const url = await freshTestDatabase('collect_mig');
    const first = await runMigrations({ DATABASE_URL: url, DATABASE_POOL_SIZE: 2 });
    expect(first.length).toBeGreaterThan(0);
    expect(await runMigrations({ DATABASE_URL: url, DATABASE_POOL_SIZE: 2 })).toEqual([]);
  });
});

describe('collect-api process', () => {
  it('drains on SIGTERM and exits 0', async () => {
    const port = await freePort();
    const proc = await startServiceProcess(MAIN, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      COLLECT_PORT: String(port),
      COLLECT_HOST: '127.0.0.1',
      DATABASE_URL: await freshTestDatabase('collect_proc'),
      REDIS_URL: sharedRedisUrl(),
      REDIS_PREFIX: freshRedisPrefix('proc'),
    }, port);
    // The start-up line names the Node.js release (Node 24 LTS: docs/operations.md, "Runtime").
    await waitFor(async () => proc.output().includes('collect-api listening'), 10_000, 'the start-up log line');
    expect(proc.output().split('\n').find((l) => l.includes('collect-api listening'))).toMatch(/; node v24\.\d+\.\d+/);
    const code = await proc.stop('SIGTERM');
    expect(code).toBe(0);
    expect(proc.output()).not.toMatch(/password|secret/i);
    expect(proc.output()).not.toContain('Unsupported runtime');
  });

  it('says at once, as JSON, why start-up waits: a refused database connection while TypeORM retries', async () => {
    // Logs were buffered until start-up ended: a worker whose database connections failed
    // retried for 30 s in silence and, killed by a readiness timeout, printed nothing at all
    // (docs/operations.md, "Start-up").
    const port = await freePort();
    const child = trackChild(spawn(process.execPath, [WORKER], {
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', DATABASE_URL: `postgres://u:hunter2@127.0.0.1:${await freePort()}/x`, REDIS_URL: sharedRedisUrl(), WORKER_PORT: String(port), COLLECT_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let out = '';
    child.stdout?.on('data', (d) => (out += d.toString()));
    child.stderr?.on('data', (d) => (out += d.toString()));
    try {
      await waitFor(async () => out.includes('Unable to connect to the database'), 45_000, 'the retry line');
      expect(child.exitCode).toBeNull();
      const line = JSON.parse(out.split('\n').find((l) => l.includes('Unable to connect to the database'))!) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 50, service: 'collect-worker', context: 'TypeOrmModule' });
      expect(line.stack).toMatch(/ECONNREFUSED/);
      expect(out).not.toContain('hunter2');
    } finally {
      await stopChild(child, 'SIGKILL');
    }
  }, 60_000);

  it('refuses to start on a bad port and names the variable', async () => {
    const port = await freePort();
    // The wait ends as soon as the process exits; its bound only matters when it never does. At
    // 10 s it was hit under load (a fresh-clone run beside other suites) by a process that had
    // printed the error and not yet exited, while Node was still loading on a busy machine.
    await expect(startServiceProcess(MAIN, { COLLECT_PORT: 'eighty', DATABASE_URL: 'postgres://u:hunter2@127.0.0.1:1/x' }, port, 45_000)).rejects.toThrow(
      /exited with 78[\s\S]*COLLECT_PORT/,
    );
  });
});
