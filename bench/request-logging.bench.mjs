// What the request logger costs a request at the default LOG_LEVEL (`info`: one line per
// answered request) against no logger at all, in this process: the logger of libs/platform
// (requestLoggerOptions and logDestination, as the services run them) over real
// IncomingMessage/ServerResponse objects, its lines written into a pipe that another process
// reads (as a container's log collector reads the services' standard output). Beside it, the
// same lines written synchronously (pino's default destination) and the logger at `warn` (no
// line). CPU and wall µs per request, the event loop turning every 50 requests as a server's
// does; rounds interleaved, medians. Figures for reading, no goal (docs/benchmarks.md,
// "request-logging").
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { median, report } from './bench-helpers.mjs';
import { logDestination, requestLoggerOptions } from '../libs/platform/dist/index.js';

const requireFromPlatform = createRequire(new URL('../libs/platform/package.json', import.meta.url));
const pinoHttp = requireFromPlatform('pino-http');
const pino = requireFromPlatform('pino');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

const reader = spawn('sh', ['-c', 'cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] });
const pipeFd = reader.stdin._handle.fd;
const loggers = {
  'no logger': null,
  warn: pinoHttp(requestLoggerOptions('bench', 'warn'), logDestination(pipeFd)),
  info: pinoHttp(requestLoggerOptions('bench', 'info'), logDestination(pipeFd)),
  'info, synchronous writes': pinoHttp(requestLoggerOptions('bench', 'info'), pino.destination({ fd: pipeFd, sync: true })),
};

function oneRequest(logger, i) {
  const req = new http.IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = `/api/v1/submissions?attempt=${i}`;
  req.headers = { host: '127.0.0.1:3000', authorization: 'Token 0123456789abcdef', 'content-type': 'application/json', 'content-length': '120' };
  const res = new http.ServerResponse(req);
  if (logger) logger(req, res, () => {});
  res.statusCode = 201;
  res.emit('finish');
}

/** [CPU µs, wall µs] per request over REQUESTS requests. */
async function measure(kind) {
  const logger = loggers[kind];
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    oneRequest(logger, i);
    if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(cpu0);
  return [(cpu.user + cpu.system) / REQUESTS, ((performance.now() - wall0) * 1000) / REQUESTS];
}

for (const kind of Object.keys(loggers)) await measure(kind); // warm-up
const per = Object.fromEntries(Object.keys(loggers).map((k) => [k, { cpu: [], wall: [] }]));
for (let r = 0; r < ROUNDS; r++) {
  for (const kind of Object.keys(loggers)) {
    const [cpu, wall] = await measure(kind);
    per[kind].cpu.push(cpu);
    per[kind].wall.push(wall);
  }
}
reader.kill();

console.log(`requests per round: ${REQUESTS}, rounds: ${ROUNDS}`);
const none = per['no logger'];
for (const kind of ['info', 'warn', 'info, synchronous writes']) {
  report(`request logging (${kind}), CPU per request beyond no logger`, median(per[kind].cpu) - median(none.cpu), { unit: 'µs', digits: 1 });
  report(`request logging (${kind}), wall time per request beyond no logger`, median(per[kind].wall) - median(none.wall), { unit: 'µs', digits: 1 });
}
process.exit(0);
