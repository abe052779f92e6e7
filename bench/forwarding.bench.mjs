// Rest-service forwarding (issue 8): submissions per second accepted AND delivered to a local
// receiver through one generic_json service (API → outbox → relay → Bull → worker process →
// HTTP), ÷ the bare PostgreSQL insert rate of rows of the same size measured in the same run
// (10 connections, one INSERT per row, no API). Then p50/p99 submit-to-delivered latency at
// half the measured rate. The built API and worker run as their own processes on embedded
// PostgreSQL + redis-server; the receiver listens on 127.0.0.1.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, startPostgres, startRedis, startServiceProcess } from '../libs/testing/dist/index.js';
import { must } from './bench-helpers.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const MAIN = fileURLToPath(new URL('../apps/collect-api/dist/main.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../apps/collect-api/dist/worker.js', import.meta.url));
const pg = createRequire(fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)))('pg');

const arrivals = new Map(); // _uuid → ms (performance.now)
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    try {
      const uuid = JSON.parse(Buffer.concat(chunks).toString())._uuid;
      if (!arrivals.has(uuid)) arrivals.set(uuid, at);
    } catch { /* not ours */ }
    res.end('ok');
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

const pgServer = await startPostgres({ fast: true });
const redis = await startRedis();
const [apiPort, workerPort] = [await freePort(), await freePort()];
let api;
let worker;
try {
  const databaseUrl = await pgServer.createDatabase('bench_collect_forwarding');
  const env = {
    NODE_ENV: 'test', LOG_LEVEL: 'warn', COLLECT_HOST: '127.0.0.1', DATABASE_URL: databaseUrl, REDIS_URL: redis.url, REDIS_PREFIX: 'bench',
    MEDIA_ROOT: mkdtempSync(join(tmpdir(), 'bench-media-')), FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', FORWARD_RELAY_INTERVAL_MS: '200',
  };
  api = await startServiceProcess(MAIN, { ...env, COLLECT_PORT: String(apiPort) }, apiPort);
  worker = await startServiceProcess(WORKER, { ...env, COLLECT_PORT: String(apiPort), WORKER_PORT: String(workerPort) }, workerPort);
  const base = api.url;
  const user = { username: 'bench', password: 'bench-password', email: 'bench@example.org' };
  await must(fetch(`${base}/api/v1/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(user) }), 201);
  const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const token = `Token ${(await (await must(fetch(`${base}/api/v1/user`, { headers: { authorization: basic } }), 200)).json()).api_token}`;
  const form = await (await must(fetch(`${base}/api/v1/forms`, {
    method: 'POST', headers: { authorization: token, 'content-type': 'application/json' },
    body: JSON.stringify({ id_string: 'bench', title: 'Bench', fields: [{ name: 'name', type: 'text' }, { name: 'age', type: 'integer' }, { name: 'loc', type: 'geopoint' }, { name: 'g', type: 'group', children: [{ name: 'a', type: 'text' }, { name: 'b', type: 'decimal' }] }] }),
  }), 201)).json();
  await must(fetch(`${base}/api/v1/restservices`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify({ xform: form.formid, name: 'generic_json', service_url: receiverUrl }) }), 201);
  const submission = (uuid = randomUUID()) => JSON.stringify({ id: 'bench', submission: { name: 'Jane', age: 34, loc: '-1.28 36.81 0 0', g: { a: 'x', b: 1.5 }, meta: { instanceID: `uuid:${uuid}` } } });
  const post = (uuid) => fetch(`${base}/api/v1/submissions`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: submission(uuid) });
  for (let i = 0; i < 50; i++) await must(post(randomUUID()), 201); // warm-up
  await until(() => arrivals.size >= 50, 30_000);

  // Baseline: bare INSERTs of a row the size of a stored submission, same connection count.
  const sample = await (await must(fetch(`${base}/api/v1/data/${form.formid}?page_size=1`, { headers: { authorization: token } }), 200)).json();
  const rowJson = JSON.stringify(sample[0]);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS });
  await pool.query('CREATE TABLE bench_rows (id serial PRIMARY KEY, uuid uuid NOT NULL UNIQUE, json jsonb NOT NULL, created timestamptz NOT NULL DEFAULT now())');
  let inserted = 0;
  const insertEnd = performance.now() + DURATION * 1000;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < insertEnd) {
      await pool.query('INSERT INTO bench_rows (uuid, json) VALUES ($1, $2)', [randomUUID(), rowJson]);
      inserted++;
    }
  }));
  await pool.end();
  const insertRate = inserted / DURATION;

  // Throughput: accepted by the API and delivered by the worker, start to last arrival.
  const before = arrivals.size;
  const start = performance.now();
  const load = await autocannon({
    url: `${base}/api/v1/submissions`, method: 'POST', headers: { authorization: token, 'content-type': 'application/json' },
    connections: CONNECTIONS, duration: DURATION, requests: [{ setupRequest: (req) => ({ ...req, body: submission() }) }],
  });
  const accepted = load.statusCodeStats?.['201']?.count ?? 0;
  if (load.errors || accepted !== load.requests.total) throw new Error(`unexpected answers: ${JSON.stringify(load.statusCodeStats)} errors ${load.errors}`);
  await until(() => arrivals.size >= before + accepted, 120_000);
  const lastArrival = Math.max(...arrivals.values());
  const deliveredRate = accepted / ((lastArrival - start) / 1000);
  const acceptedRate = accepted / DURATION;

  // Latency at half the delivered rate: paced submissions, submit → arrival at the receiver.
  const rate = Math.max(1, deliveredRate / 2);
  const count = Math.round(rate * DURATION);
  const sentAt = new Map();
  const t0 = performance.now();
  const inflight = [];
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const uuid = randomUUID();
    sentAt.set(uuid, performance.now());
    inflight.push(must(post(uuid), 201));
  }
  await Promise.all(inflight);
  await until(() => [...sentAt.keys()].every((u) => arrivals.has(u)), 120_000);
  const lat = [...sentAt].map(([u, t]) => arrivals.get(u) - t).sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];

  console.log(`bare PostgreSQL INSERT (${rowJson.length}-byte jsonb rows, ${CONNECTIONS} connections): ${Math.round(insertRate)} rows/s`);
  console.log(`submissions accepted: ${Math.round(acceptedRate)}/s; accepted and delivered (start to last delivery): ${Math.round(deliveredRate)}/s (${accepted} submissions)`);
  console.log(`ratio delivered/bare-insert: ${(deliveredRate / insertRate).toFixed(3)}`);
  console.log(`ratio accepted/bare-insert: ${(acceptedRate / insertRate).toFixed(3)} (reference)`);
  console.log(`latency submit-to-delivered at ${Math.round(rate)}/s (${count} submissions): p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms`);
} finally {
  await worker?.stop();
  await api?.stop();
  await redis.stop();
  await pgServer.stop();
  receiver.close();
}

async function until(check, timeoutMs) {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error('timed out waiting for deliveries');
    await new Promise((r) => setTimeout(r, 20));
  }
}

