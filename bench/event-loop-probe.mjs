// Preloaded into a service under bench (`node --import=<this file> dist/main.js`, see
// startService in bench-helpers.mjs): measures the event-loop delay inside that process with
// perf_hooks.monitorEventLoopDelay and serves it on 127.0.0.1:BENCH_PROBE_PORT, so a bench
// reads the API's own figure without the API exposing anything for it.
// GET /event-loop → {samples, p50, p99, max, gc} in ms since the previous read, then starts afresh;
// gc: per kind of collection (minor, major, incremental, weakcb) its count, total and longest pause
// (ms) and how many took 10 ms or more.
// The histogram records each timer interval, which includes the timer's own RESOLUTION_MS:
// that is subtracted, so an idle loop reads about 0 (prom-client's nodejs_eventloop_lag_*
// metrics use the same monitor at the same resolution but do not subtract it).
import http from 'node:http';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const port = Number(process.env.BENCH_PROBE_PORT);

if (Number.isInteger(port) && port > 0) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const lag = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  // GC pauses since the previous read, by kind: which of the loop's long stalls a collection was.
  const KINDS = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
  let gc = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const k = (gc[KINDS[e.detail?.kind] ?? 'other'] ??= { count: 0, ms: 0, max: 0, over10: 0 });
      k.count++;
      k.ms += e.duration;
      k.max = Math.max(k.max, e.duration);
      if (e.duration >= 10) k.over10++;
    }
  }).observe({ entryTypes: ['gc'] });
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/event-loop') {
      res.statusCode = 404;
      res.end();
      return;
    }
    const empty = histogram.count === 0;
    const body = {
      samples: histogram.count,
      p50: empty ? 0 : lag(histogram.percentile(50)),
      p99: empty ? 0 : lag(histogram.percentile(99)),
      max: empty ? 0 : lag(histogram.max),
      gc,
    };
    histogram.reset();
    gc = {};
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  server.listen(port, '127.0.0.1');
  server.unref(); // the probe never keeps the service alive
}
