// How high delivered ÷ intake (forwarding.bench.mjs, goal >= 0.75) can go on this
// machine for ANY forwarder, measured beside ours in one run (docs/benchmarks.md,
// "forwarding-ceiling"). Four kinds of round, interleaved, each
// BENCH_SECONDS of the same closed-loop load (BENCH_CONNECTIONS keep-alive connections posting the
// small JSON submission, the next on each 201), delivered rates counted from the start of the load
// to the last arrival at the receiver, as forwarding.bench.mjs counts them:
//   intake:    a form without a service: the baseline of the ratio;
//   http-only: the same form, and for each 201 a thread of this process (bench/ideal-forwarder.mjs)
//              POSTs the submission's payload to the receiver: a forwarder whose whole cost is its
//              HTTP request, with nothing durable;
//   durable:   a form with one generic_json service (so the intake writes its outbox rows), the
//              worker stopped (SIGSTOP, resumed after the round), and the thread POSTs each payload
//              and records each answered delivery as the worker's attempt write does: the least an
//              outbox that keeps its promises stores, without the claim, the lease, the read of
//              the submission (deleted-before-send), ordering or the destination gate;
//   ours:      a form with one generic_json service, delivered by the worker.
// Ratios to the intake rounds (medians), no goal: the reference the goal row is read against.
// The built API and worker run as their own processes on embedded PostgreSQL + redis-server.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { addJsonService, createForm, httpPost, median, must, report, SMALL_FORM_FIELDS, smallSubmission, startCollect, startReceiver, until, userToken } from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** Each kind of round and the id_string of the form it submits to. */
const FORMS = { intake: 'plain', 'http-only': 'ideal', durable: 'durable', ours: 'ours' };
const KINDS = Object.keys(FORMS);

const receiver = await startReceiver();
const { arrivals } = receiver;
const pgServer = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
let forwarder;
try {
  collect = await startCollect({ pg: pgServer, redis, database: 'bench_collect_ceiling', worker: true });
  const base = collect.url;
  const token = await userToken(base);
  const forms = {};
  for (const [kind, idString] of Object.entries(FORMS)) {
    forms[kind] = await createForm(base, token, { id_string: idString, title: idString, fields: SMALL_FORM_FIELDS });
    if (kind === 'durable' || kind === 'ours') await addJsonService(base, token, forms[kind].formid, receiver.url);
  }
  const services = await (await must(fetch(`${base}/api/v1/restservices?xform=${forms.durable.formid}`, { headers: { authorization: token } }), 200)).json();
  const durableService = services.find((s) => s.xform === forms.durable.formid)?.id;
  if (!durableService) throw new Error(`no rest service listed for form ${forms.durable.formid}: ${JSON.stringify(services)}`);

  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const headers = { authorization: token, 'content-type': 'application/json' };
  const submit = (idString, uuid) => httpPost(agent, `${base}/api/v1/submissions`, headers, smallSubmission(idString, uuid), 30_000);
  for (let i = 0; i < 50; i++) await submit(FORMS.intake, randomUUID()); // warm-up
  for (let i = 0; i < 50; i++) await submit(FORMS.ours, randomUUID());
  await until(() => arrivals.size >= 50, 30_000, 'warm-up deliveries');
  // The payload the ideal forwarder sends: a delivered submission's JSON, as the data API gives it.
  const [payload] = await (await must(fetch(`${base}/api/v1/data/${forms.ours.formid}?page_size=1`, { headers: { authorization: token } }), 200)).json();

  forwarder = new Worker(new URL('./ideal-forwarder.mjs', import.meta.url), {
    workerData: { requireFrom: fileURLToPath(new URL('../apps/collect-api/package.json', import.meta.url)), receiverUrl: receiver.url, payload, databaseUrl: collect.databaseUrl, formId: forms.durable.formid, serviceId: durableService },
  });
  forwarder.on('error', (err) => {
    console.error(`ideal forwarder failed: ${err.stack ?? err}`);
    process.exit(1);
  });
  let told = [];
  let drainSeq = 0;
  const tell = (uuid) => {
    if (!told.length) setImmediate(flushTold);
    told.push(uuid);
  };
  function flushTold() {
    if (told.length) forwarder.postMessage({ uuids: told });
    told = [];
  }
  const drained = () => {
    flushTold();
    const seq = ++drainSeq;
    return new Promise((resolve) => {
      const onMessage = (m) => {
        if (m.drained !== seq) return;
        forwarder.off('message', onMessage);
        resolve();
      };
      forwarder.on('message', onMessage);
      forwarder.postMessage({ drain: seq });
    });
  };

  async function round(kind) {
    const idString = FORMS[kind];
    const viaThread = kind === 'http-only' || kind === 'durable';
    if (viaThread) forwarder.postMessage({ mode: kind === 'durable' ? 'durable' : 'http' });
    // Nobody but the ideal forwarder may finish the durable form's rows.
    if (kind === 'durable') process.kill(collect.worker.child.pid, 'SIGSTOP');
    try {
      const before = arrivals.size;
      const start = performance.now();
      const end = start + DURATION * 1000;
      let ok = 0;
      await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < end) {
          const uuid = randomUUID();
          const status = await submit(idString, uuid);
          if (status !== 201) throw new Error(`${kind}: answer ${status}`);
          ok++;
          if (viaThread) tell(uuid);
        }
      }));
      if (kind === 'intake') return ok / ((performance.now() - start) / 1000);
      if (viaThread) await drained();
      await until(() => arrivals.size >= before + ok, 300_000, `${ok} deliveries`);
      return ok / ((Math.max(...arrivals.values()) - start) / 1000);
    } finally {
      if (kind === 'durable') process.kill(collect.worker.child.pid, 'SIGCONT');
    }
  }

  const rates = Object.fromEntries(KINDS.map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of KINDS) rates[kind].push(await round(kind));
  }
  const intake = median(rates.intake);
  console.log(`JSON intake, form without a service: ${intake.toFixed(0)}/s (median of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  for (const kind of KINDS.slice(1)) {
    const perRound = rates[kind].map((v, i) => (v / rates.intake[i]).toFixed(2)).join(', ');
    console.log(`${kind}: accepted and delivered ${median(rates[kind]).toFixed(0)}/s; ratio to intake ${(median(rates[kind]) / intake).toFixed(2)} (each round against its own intake round: ${perRound})`);
  }
  report('ratio delivered/intake, forwarder that only sends (reference)', median(rates['http-only']) / intake);
  report('ratio delivered/intake, forwarder that sends and records (reference)', median(rates.durable) / intake);
  report('ratio delivered/intake, ours in this bench', median(rates.ours) / intake);
  // Ours against the least durable forwarder of the same run: what our path costs beyond what
  // any outbox must do, with the VM's phase and the shared cores in both sides.
  report('ratio delivered ours/durable forwarder', median(rates.ours) / median(rates.durable));
} finally {
  await forwarder?.terminate();
  await collect?.stop();
  await redis.stop();
  await pgServer.stop();
  await receiver.close();
}
