// The intake and read paths against the authenticated floor, all in one run:
// - JSON submissions per second (POST /api/v1/submissions, Token, every request a new
//   instance) ÷ GET /api/v1/user with Token (auth + one DB read: the floor of any
//   authenticated call); goal >= 0.5;
// - OpenRosa multipart submissions with one 100 KB JPEG per second (POST /submission) ÷ the
//   same baseline; goal >= 0.25;
// - GET /api/v1/data/{form}?page_size=100 per second ÷ the same baseline; goal >= 0.3;
// - the API's event-loop delay p99 during the JSON rounds, read inside the API process
//   (bench/event-loop-probe.mjs); goal <= 20 ms.
// GET /health/live is measured for reference. The built collect-api runs as its own process on
// embedded PostgreSQL + redis-server; autocannon drives it. BENCH_CPU_PROF=<dir> profiles it
// (windows per case: user, json, openrosa, data-page; see docs/benchmarks.md).
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { createForm, median, must, profiled, report, requestsPerSecond, SMALL_FORM_FIELDS, smallSubmission, startCollect, userToken, writeProfileWindows } from './bench-helpers.mjs';
import { openRosaPhotoBodies, openRosaPhotoBody, photoJpeg, PHOTO_FORM_FIELDS } from './intake-fixtures.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
try {
  collect = await startCollect({ pg, redis, database: 'bench_collect_submissions', probe: true });
  const base = collect.url;
  const token = await userToken(base);
  const form = await createForm(base, token, { id_string: 'bench', title: 'Bench', fields: SMALL_FORM_FIELDS });
  await createForm(base, token, { id_string: 'bench_photo', title: 'Bench photo', fields: PHOTO_FORM_FIELDS });
  const jpeg = await photoJpeg(100 * 1024);
  for (let i = 0; i < 100; i++) await must(fetch(`${base}/api/v1/submissions`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: smallSubmission('bench') }), 201);
  const sample = openRosaPhotoBody('bench_photo', jpeg);
  await must(fetch(`${base}/submission`, { method: 'POST', headers: { authorization: token, 'content-type': sample.contentType }, body: sample.body }), 201);
  const photoBodies = openRosaPhotoBodies('bench_photo', jpeg);

  const cases = {
    user: { label: 'GET /api/v1/user (Token, baseline)', url: `${base}/api/v1/user`, headers: { authorization: token } },
    health: { label: 'GET /health/live (reference)', url: `${base}/health/live`, headers: {} },
    json: {
      label: 'POST /api/v1/submissions (JSON, new instance each)', url: `${base}/api/v1/submissions`, method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: smallSubmission('bench') }), expect: 201,
    },
    openrosa: {
      label: `POST /submission (OpenRosa multipart, one ${Math.round(jpeg.length / 1024)} KB JPEG)`, url: `${base}/submission`, method: 'POST',
      // A new instance and file name each request; the body's bytes patched in place, not rebuilt (intake-fixtures.mjs).
      headers: { authorization: token, 'content-type': photoBodies.contentType },
      setupRequest: (req) => ({ ...req, body: photoBodies.next() }),
      expect: 201,
    },
    'data-page': { label: 'GET /api/v1/data/{form}?page_size=100', url: `${base}/api/v1/data/${form.formid}?page_size=100`, headers: { authorization: token } },
  };
  for (const c of Object.values(cases)) await requestsPerSecond(c, 1, CONNECTIONS); // warm-up: JIT, pools, caches
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const loopDelay = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [key, c] of Object.entries(cases)) {
      await collect.api.probe.read(); // starts the API's event-loop histogram afresh
      results[key].push(await profiled(key, () => requestsPerSecond(c, DURATION, CONNECTIONS)));
      loopDelay[key].push((await collect.api.probe.read()).p99);
    }
  }
  const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  const lag = Object.fromEntries(Object.entries(loopDelay).map(([k, v]) => [k, median(v)]));
  for (const [key, rps] of Object.entries(rate)) {
    console.log(`${cases[key].label}: ${Math.round(rps)} req/s; API event-loop delay p99 ${lag[key].toFixed(1)} ms (medians of ${ROUNDS} x ${DURATION}s, ${CONNECTIONS} connections)`);
  }
  const baseline = rate.user;
  report('ratio submissions/user', rate.json / baseline, { goal: '>= 0.5' });
  report('ratio openrosa-100KB-jpeg/user', rate.openrosa / baseline, { goal: '>= 0.25' });
  report('ratio data-page-100/user', rate['data-page'] / baseline, { goal: '>= 0.3' });
  report('API event-loop delay p99 under JSON intake', lag.json, { goal: '<= 20', unit: 'ms', digits: 1 });
  report('ratio submissions/health-live', rate.json / rate.health);
  writeProfileWindows();
} finally {
  await collect?.stop();
  await redis.stop();
  await pg.stop();
}
