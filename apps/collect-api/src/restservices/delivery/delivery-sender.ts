import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import type { DestinationAgents } from '../destinations/destination-agents.js';
import type { NetworkGuard } from '../destinations/network-guard.js';
import type { OutgoingRequest } from '../forwarders/index.js';
import type { DeliveryEvent } from '../restservice.entities.js';

export const USER_AGENT = 'collect-api-restservices/1.0';
const EXCERPT_CHARS = 1_000;
const MAX_READ_BYTES = 64 * 1024;

export interface DeliveryHeaders {
  deliveryId: string;
  attempt: number;
  /** `X-Submission-Event`: a submission event, or an entity one (`entity_created`, ...). */
  event: DeliveryEvent;
  /** `whsec_<base64>` or null. */
  signingSecret: string | null;
}

export interface SendResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /** Seconds or an HTTP date from `Retry-After`, resolved to milliseconds from now. */
  retryAfterMs: number | null;
}

/** Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with the decoded secret. */
export function webhookSignature(secret: string, id: string, timestamp: number, body: Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The full header set of a delivery: the forwarder's plus the ones every delivery carries. */
export function deliveryHeaders(req: OutgoingRequest, h: DeliveryHeaders, now = Date.now()): Record<string, string> {
  const headers: Record<string, string> = {
    ...req.headers,
    'User-Agent': USER_AGENT,
    'X-Delivery-Id': h.deliveryId,
    'X-Delivery-Attempt': String(h.attempt),
    'X-Submission-Event': h.event,
  };
  if (req.body) headers['Content-Length'] = String(req.body.length);
  if (h.signingSecret) {
    const ts = Math.floor(now / 1000);
    headers['webhook-id'] = h.deliveryId;
    headers['webhook-timestamp'] = String(ts);
    headers['webhook-signature'] = webhookSignature(h.signingSecret, h.deliveryId, ts, req.body ?? Buffer.alloc(0));
  }
  return headers;
}

/**
 * One HTTP attempt over node:http (no fetch: its implicit headers would change the documented
 * wire format). Redirects are not followed (a redirect to a private address would bypass the
 * guard). With `agents`, the connection comes from the destination's keep-alive pool; a request
 * whose reused connection turns out closed by the server before any answer is sent once more on
 * a new one (Node's documented `reusedSocket` pattern). Never throws: failures come back as `error`.
 */
export async function sendOnce(req: OutgoingRequest, headers: Record<string, string>, guard: NetworkGuard, timeoutMs: number, agents?: DestinationAgents): Promise<SendResult> {
  const started = process.hrtime.bigint();
  const first = await attempt(req, headers, guard, timeoutMs, started, agents);
  return first.staleConnection ? attempt(req, headers, guard, timeoutMs, started, agents) : first;
}

/** A request target parsed once: the URL, its host as the guard sees it, node:http's options of it. */
interface Target {
  url: URL;
  host: string;
  options: http.RequestOptions;
}

const TARGETS_KEPT = 1_000;
const targets = new Map<string, Target>();

/**
 * The parsed target of a service URL, kept (at most TARGETS_KEPT, oldest out first): a worker
 * sends most deliveries to a few URLs, and parsing each request's URL and turning it into
 * node:http options (`new URL` + urlToHttpOptions, which node:http does for a URL argument)
 * was per delivery (docs/restservices.md, "Connections and batches (the worker's hot path)", the worker's
 * profile). Null for a URL that does not parse.
 */
function targetOf(href: string): Target | null {
  const hit = targets.get(href);
  if (hit) return hit;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  const target = { url, host: url.hostname.replace(/^\[|\]$/g, ''), options: urlToHttpOptions(url) as http.RequestOptions };
  if (targets.size >= TARGETS_KEPT) targets.delete(targets.keys().next().value!);
  targets.set(href, target);
  return target;
}

function attempt(req: OutgoingRequest, headers: Record<string, string>, guard: NetworkGuard, timeoutMs: number, started: bigint, agents?: DestinationAgents): Promise<SendResult & { staleConnection?: boolean }> {
  const latency = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  return new Promise((resolve) => {
    const target = targetOf(req.url);
    if (!target) return resolve({ statusCode: null, latencyMs: 0, error: 'invalid URL', responseExcerpt: null, retryAfterMs: null });
    const { url, host } = target;
    // IP literals skip `lookup`, so they are checked here.
    const refused = isIP(host) ? guard.refusal(host) : null;
    if (refused) return resolve({ statusCode: null, latencyMs: 0, error: `refused: ${refused}`, responseExcerpt: null, retryAfterMs: null });
    const client = url.protocol === 'https:' ? https : http;
    let done = false;
    const finish = (r: SendResult & { staleConnection?: boolean }) => {
      if (!done) {
        done = true;
        resolve(r);
      }
    };
    // Options only (no URL argument): node:http copies them into its own object. It throws at
    // once on a header it will not write (a control character in a value stored before the
    // API checked them): a final failure, the same request would be refused every time.
    let request: http.ClientRequest;
    try {
      request = client.request({ ...target.options, method: req.method, headers, lookup: guard.lookup as never, agent: agents ? agents.for(url) : false, timeout: timeoutMs }, onResponse);
    } catch (e) {
      return resolve({ statusCode: null, latencyMs: 0, error: `refused: ${(e as Error).message}`.slice(0, 1_000), responseExcerpt: null, retryAfterMs: null });
    }
    function onResponse(res: http.IncomingMessage): void {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_READ_BYTES) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => finish({
        statusCode: res.statusCode ?? null,
        latencyMs: latency(),
        error: null,
        responseExcerpt: Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARS),
        retryAfterMs: parseRetryAfter(res.headers['retry-after']),
      }));
      res.on('error', (e) => finish({ statusCode: res.statusCode ?? null, latencyMs: latency(), error: e.message, responseExcerpt: null, retryAfterMs: null }));
    }
    let answered = false;
    request.once('response', () => (answered = true));
    const deadline = setTimeout(() => request.destroy(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
    request.on('timeout', () => request.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    request.on('error', (e: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && !answered && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
      finish({ statusCode: null, latencyMs: latency(), error: e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message, responseExcerpt: null, retryAfterMs: null, staleConnection: stale });
    });
    request.on('close', () => clearTimeout(deadline));
    request.end(req.body ?? undefined);
  });
}

export function parseRetryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** 408, 425, 429, 5xx and transport errors are worth another attempt; other statuses are final. */
export function isRetryable(statusCode: number | null): boolean {
  if (statusCode === null) return true;
  return statusCode === 408 || statusCode === 425 || statusCode === 429 || statusCode >= 500;
}

/** Exponential backoff with ±25 % jitter: base · factor^(n-1), capped. */
export function backoffMs(attemptsMade: number, base: number, factor: number, max: number, random = Math.random): number {
  const raw = Math.min(max, base * Math.pow(factor, Math.max(0, attemptsMade - 1)));
  return Math.min(max, Math.round(raw * (0.75 + random() * 0.5)));
}
