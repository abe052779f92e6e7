import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { freePort, freshTestDatabase, startServiceProcess, waitFor } from '@collect/testing';
import { runMigrations } from '../src/database/data-source.js';
import { startTestCasApp, type TestCasApp } from './test-app.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe('cas foundation', () => {
  let sut: TestCasApp;

  beforeAll(async () => {
    sut = await startTestCasApp();
  });
  afterAll(() => sut.close());

  it('answers /health/live and /health/ready with JSON', async () => {
    await request(sut.url).get('/health/live').expect(200).expect('content-type', /json/);
    const ready = await request(sut.url).get('/health/ready').expect(200);
    expect(ready.body.checks).toHaveProperty('database', 'up');
  });

  it('turns an unknown route into 404 {"detail": "Not found."}', async () => {
    await request(sut.url).get('/no-such-thing').expect(404, { detail: 'Not found.' });
  });

  it('serves the OpenAPI document at /docs', async () => {
    const doc = await request(sut.url).get('/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
  });

  it('applies migrations to an empty database and a second run applies nothing', async () => {
    const url = await freshTestDatabase('cas_mig');
    const first = await runMigrations({ CAS_DATABASE_URL: url, CAS_DATABASE_POOL_SIZE: 2 });
    expect(first.length).toBeGreaterThan(0);
    expect(await runMigrations({ CAS_DATABASE_URL: url, CAS_DATABASE_POOL_SIZE: 2 })).toEqual([]);
  });
});

describe('cas process', () => {
  it('drains on SIGTERM and exits 0', async () => {
    const port = await freePort();
    const proc = await startServiceProcess(MAIN, {
      NODE_ENV: 'test',
      CAS_PORT: String(port),
      CAS_HOST: '127.0.0.1',
      CAS_DATABASE_URL: await freshTestDatabase('cas_proc'),
      LOG_LEVEL: 'info',
    }, port);
    // The start-up line names the Node.js release; oidc-provider warns on any release it does not support (Node 24 LTS: docs/operations.md, "Runtime").
    await waitFor(async () => proc.output().includes('cas listening'), 10_000, 'the start-up log line');
    expect(proc.output().split('\n').find((l) => l.includes('cas listening'))).toMatch(/; node v24\.\d+\.\d+/);
    expect(await proc.stop('SIGTERM')).toBe(0);
    expect(proc.output()).not.toContain('Unsupported runtime');
  });

  it('refuses to start on a bad port and names the variable', async () => {
    const port = await freePort();
    // The wait ends as soon as the process exits; its bound only matters when it never does. At
    // 10 s it was hit under load (a fresh-clone run beside other suites) by a process that had
    // printed the error and not yet exited, while Node was still loading on a busy machine.
    await expect(startServiceProcess(MAIN, { CAS_PORT: '99999' }, port, 45_000)).rejects.toThrow(/exited with 78[\s\S]*CAS_PORT/);
  });
});
