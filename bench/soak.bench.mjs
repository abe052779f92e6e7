// Soak: JSON submissions of a generated 250-question form (text, integer, decimal,
// select_one, select_multiple, date in 10 groups) sent at a fixed rate for a fixed time, with
// one generic_json service forwarding to a local receiver. ODK Central's own soak test gates at
// 50 submissions/s for 30 s on a form of 250 questions; the default here is ten times that
// rate. Reports accepted % (201 answers of the scheduled sends), delivered % (of the accepted,
// arrived within the grace period after the last answer), p50/p99 submit-to-delivered latency
// and the API's event-loop delay p99 over the soak (read inside the API process).
// The sender is paced (due times fixed from the start) over keep-alive connections and bounded:
// at most BENCH_SOAK_MAX_IN_FLIGHT requests pending (a due send beyond that is skipped and
// counted as not accepted), each answered within BENCH_SOAK_TIMEOUT_MS or counted as failed.
// The built API and worker run as their own processes on embedded PostgreSQL + redis-server.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { addJsonService, createForm, gcPausesText, httpPost, must, paced, percentile, profiled, report, sleep, startCollect, startReceiver, until, userToken, writeProfileWindows } from './bench-helpers.mjs';
import { largeForm, largeSubmission, largeSubmissionBodies } from './intake-fixtures.mjs';

const RATE = Number(process.env.BENCH_SOAK_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 30);
const GRACE_SECONDS = Number(process.env.BENCH_SOAK_GRACE_SECONDS ?? 10);
const QUESTIONS = Number(process.env.BENCH_SOAK_QUESTIONS ?? 250);
const MAX_IN_FLIGHT = Number(process.env.BENCH_SOAK_MAX_IN_FLIGHT ?? 500);
const SOCKETS = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 50);
const TIMEOUT_MS = Number(process.env.BENCH_SOAK_TIMEOUT_MS ?? 10_000);

const receiver = await startReceiver();
const pg = await startPostgres({ fast: true });
const redis = await startRedis();
const agent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS });
let collect;
try {
  collect = await startCollect({ pg, redis, database: 'bench_collect_soak', worker: true, probe: true });
  const base = collect.url;
  const token = await userToken(base);
  const definition = largeForm('soak', QUESTIONS);
  const form = await createForm(base, token, definition);
  await addJsonService(base, token, form.formid, receiver.url);
  const headers = { authorization: token, 'content-type': 'application/json' };
  const url = `${base}/api/v1/submissions`;
  for (let i = 0; i < 50; i++) await must(fetch(url, { method: 'POST', headers, body: largeSubmission(definition) }), 201); // warm-up
  await until(() => receiver.arrivals.size >= 50, 60_000, 'warm-up deliveries');
  const [stored] = await (await must(fetch(`${base}/api/v1/data/${form.formid}?page_size=1`, { headers: { authorization: token } }), 200)).json();
  const answered = Object.keys(stored).filter((k) => /^g\d+\/q\d+$/.test(k)).length;
  if (answered !== QUESTIONS) throw new Error(`a stored submission holds ${answered} answers, not ${QUESTIONS}`);
  const bytes = Buffer.byteLength(largeSubmission(definition));
  // Bodies from one template: the sender shares the system's two cores (largeSubmissionBodies).
  const bodies = largeSubmissionBodies(definition);

  const count = Math.round(RATE * SECONDS);
  const sentAt = new Map();
  const outcome = { accepted: 0, refused: 0, failed: 0 };
  const statuses = {};
  await collect.api.probe.read(); // the API's event-loop histogram starts with the soak
  const { skipped, seconds } = await profiled('soak', () => paced({
    rate: RATE, count, maxInFlight: MAX_IN_FLIGHT, send: async () => {
      const uuid = randomUUID();
      const body = bodies.next(uuid);
      const at = performance.now();
      try {
        const status = await httpPost(agent, url, headers, body, TIMEOUT_MS);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 201) {
          sentAt.set(uuid, at);
          outcome.accepted++;
        } else outcome.refused++;
      } catch {
        outcome.failed++;
      }
    },
  }));
  const loop = await collect.api.probe.read();
  const graceEnd = performance.now() + GRACE_SECONDS * 1000;
  while (performance.now() < graceEnd && [...sentAt.keys()].some((u) => !receiver.arrivals.has(u))) await sleep(100);
  const lat = [...sentAt].filter(([u]) => receiver.arrivals.has(u)).map(([u, t]) => receiver.arrivals.get(u) - t);

  console.log(`soak: ${count} submissions of ${QUESTIONS} questions (${bytes} bytes each) scheduled at ${RATE}/s for ${SECONDS} s (took ${seconds.toFixed(1)} s), ${SOCKETS} keep-alive connections, at most ${MAX_IN_FLIGHT} in flight`);
  console.log(`answers: ${outcome.accepted} accepted (201), ${outcome.refused} refused ${JSON.stringify(statuses)}, ${outcome.failed} failed/timed out, ${skipped} not sent (sender bound reached)`);
  console.log(`delivered within ${GRACE_SECONDS} s after the last answer: ${lat.length} of ${outcome.accepted}; submit-to-delivered p50 ${percentile(lat, 50).toFixed(0)} ms, p99 ${percentile(lat, 99).toFixed(0)} ms`);
  console.log(`API event-loop delay over the soak: p50 ${loop.p50.toFixed(1)} ms, p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(0)} ms`);
  console.log(`API GC pauses over the soak: ${gcPausesText(loop.gc, { over10: true })}`);
  // Per 1,000 accepted submissions: comparable between runs that accepted different numbers (docs/benchmarks.md, "soak").
  const per1000 = (kind) => (outcome.accepted ? ((loop.gc?.[kind]?.count ?? 0) * 1000) / outcome.accepted : 0).toFixed(1);
  console.log(`API collections per 1,000 accepted: ${per1000('minor')} scavenges, ${per1000('major')} mark-compacts`);
  report(`soak accepted at ${RATE}/s`, (100 * outcome.accepted) / count, { goal: '>= 99.9', unit: '%', digits: 1 });
  report(`soak delivered at ${RATE}/s (of accepted, ${GRACE_SECONDS} s grace)`, outcome.accepted ? (100 * lat.length) / outcome.accepted : 0, { goal: '>= 99.9', unit: '%', digits: 1 });
  report(`soak p99 submit-to-delivered at ${RATE}/s`, percentile(lat, 99), { unit: 'ms', digits: 0 });
  report(`soak API event-loop delay p99 at ${RATE}/s`, loop.p99, { goal: '<= 20', unit: 'ms', digits: 1 });
  writeProfileWindows();
} finally {
  agent.destroy();
  await collect?.stop();
  await redis.stop();
  await pg.stop();
  await receiver.close();
}
