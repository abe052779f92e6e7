// A destination that enforces its own quota the way flow-start and sheet APIs do, in a process of
// its own so that pauses of the test process (GC, a busy machine) cannot bunch arrivals together:
// more than `allowed` requests within any `windowMs` -> 429. Arrival times, the ids of the bodies
// and the refusals are served at GET /__stats. Started by QuotaReceiver in restservices-care.e2e.ts.
import http from 'node:http';

const [allowed, windowMs] = process.argv.slice(2).map(Number);
const arrivals = [];
const ids = [];
const refusedAt = [];

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ arrivals, ids, refusedAt }));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    let recent = 0;
    for (let i = arrivals.length - 1; i >= 0 && arrivals[i] > now - windowMs; i--) recent++;
    if (recent >= allowed) {
      refusedAt.push(now);
      res.writeHead(429, { 'Retry-After': '1' }).end('quota');
      return;
    }
    arrivals.push(now);
    const body = JSON.parse(Buffer.concat(chunks).toString());
    ids.push(Number(body._id ?? body.extra?._id));
    res.writeHead(200).end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
