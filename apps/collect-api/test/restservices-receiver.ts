import http from 'node:http';

/** Forwarding settings of the in-process rest-service suites: retries after 40 ms, 80 ms, ...; the relay looks every 50 ms. */
export const FAST_FORWARDING = {
  FORWARD_BACKOFF_BASE_MS: '40',
  FORWARD_BACKOFF_FACTOR: '2',
  FORWARD_RELAY_INTERVAL_MS: '50',
  FORWARD_TIMEOUT_MS: '3000',
};

/** Forwarding settings of the suites that run the worker process (dist/worker.js). */
export const WORKER_FORWARDING = {
  FORWARD_BACKOFF_BASE_MS: '50',
  FORWARD_BACKOFF_FACTOR: '2',
  FORWARD_MAX_ATTEMPTS: '20',
  FORWARD_RELAY_INTERVAL_MS: '100',
  FORWARD_TIMEOUT_MS: '3000',
  FORWARD_CONCURRENCY: '16',
};

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** Raw header pairs as sent (names keep their case). */
  rawHeaders: string[];
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
  /** The client's port: requests with the same one came over the same connection. */
  remotePort: number;
}

export interface ReceiverReply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer only after this many ms (a slow receiver). */
  delayMs?: number;
  /** Answer only once this settles (a receiver held until the test lets it go). */
  until?: Promise<unknown>;
}

/**
 * A real local HTTP receiver for deliveries. `script(path, replies)` sets the answers for a
 * path in order (the last one repeats); without a script a path answers 200 `ok`.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  /** Requests answered (a request is recorded when its body arrived, before any delay). */
  replied = 0;
  /** Most requests waiting for their answer at one time. */
  maxInFlight = 0;
  private inFlight = 0;
  private readonly scripts = new Map<string, ReceiverReply[]>();
  private server!: http.Server;
  url = '';

  /** `keepAliveTimeoutMs`: how long an idle client connection stays open (default 1 ms). */
  async start(options: { keepAliveTimeoutMs?: number } = {}): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        this.requests.push({ method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders, headers: req.headers, body: Buffer.concat(chunks), at: Date.now(), remotePort: req.socket.remotePort ?? 0 });
        const script = this.scripts.get(path);
        const reply = script && script.length > 1 ? script.shift()! : (script?.[0] ?? { status: 200, body: 'ok' });
        const send = () => {
          res.writeHead(reply.status, { 'Content-Type': 'text/plain', ...reply.headers });
          res.end(reply.body ?? '');
          this.replied++;
          this.inFlight--;
        };
        if (reply.until) void reply.until.finally(send);
        else if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
    this.server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${addr.port}`;
    return this;
  }

  script(path: string, replies: ReceiverReply[]): void {
    this.scripts.set(path, [...replies]);
  }

  to(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.url.split('?')[0] === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Header names as sent, lower-cased and sorted. */
export function headerNames(r: ReceivedRequest): string[] {
  return r.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()).sort();
}

export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
