// Preloaded into a service under bench (`node --import=<this file> dist/main.js`, see
// startService in bench-helpers.mjs): measures the event-loop delay inside that process with
// perf_hooks.monitorEventLoopDelay and serves it on 127.0.0.1:BENCH_PROBE_PORT, so a bench
// reads the API's own figure without the API exposing anything for it.
// GET /event-loop → {samples, p50, p99, max} in ms since the previous read, then starts afresh.
// The histogram records each timer interval, which includes the timer's own RESOLUTION_MS:
// that is subtracted, so an idle loop reads about 0 (prom-client's nodejs_eventloop_lag_*
// metrics use the same monitor at the same resolution but do not subtract it).
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const port = Number(process.env.BENCH_PROBE_PORT);

if (Number.isInteger(port) && port > 0) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const lag = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
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
    };
    histogram.reset();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  server.listen(port, '127.0.0.1');
  server.unref(); // the probe never keeps the service alive
}
