import { appendFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import pg from 'pg';
import { encodeBody, type FuzzRequest } from './requests.js';

/**
 * What a refused request must answer with:
 * - `drf`: `{"detail": str}` or `{field: [str, ...]}` (docs/api-conventions.md §Errors);
 * - `oauth`: RFC 6749 `{error, error_description?}`; body-level refusals that happen before the
 *   OAuth handler runs (413, 415, 429) may use the `drf` shape;
 * - `html`: an HTML page or the `drf` shape (browser pages of the login/consent flows).
 */
export type AnswerShape = 'drf' | 'oauth' | 'html';

export interface FuzzTarget {
  /** Shown in reports: `POST /api/v1/forms (xml)`. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * Path (without query); a function is called per case (fresh ids, or a fresh browser
   * interaction with its cookies) and may add headers. A request's own `path` wins.
   */
  path: string | (() => string | Promise<string | { path: string; headers: Record<string, string> }>);
  /** Credentials and other fixed headers. */
  headers?: Record<string, string>;
  input: fc.Arbitrary<FuzzRequest>;
  answers: AnswerShape;
  /** Tables whose row counts must not change when the request is refused (no partial record). */
  tables?: string[];
  /** Relative share of the run budget (default 1). */
  weight?: number;
}

export interface FuzzSettings {
  seed: number;
  /** Cases for a target of weight 1. */
  runs: number;
  /** A request not answered within this is a hang. */
  timeoutMs: number;
}

/**
 * Seeded and deterministic in CI (`FUZZ_SEED`, default fixed); `FUZZ_SEED=random` picks one
 * and prints it so a failure can be replayed. `FUZZ_RUNS` scales the cases per endpoint.
 */
export function fuzzSettings(defaultRuns: number): FuzzSettings {
  const rawSeed = process.env.FUZZ_SEED;
  const seed = rawSeed === 'random' ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : rawSeed ? Number(rawSeed) : 20_261_123;
  const runs = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : defaultRuns;
  if (!Number.isInteger(seed) || !Number.isInteger(runs) || runs < 1) throw new Error('FUZZ_SEED must be an integer or "random"; FUZZ_RUNS a positive integer');
  // Printed up front so a run that is stopped can still be replayed.
  process.stdout.write(`fuzz: seed ${seed}, ${runs} cases per endpoint (replay: FUZZ_SEED=${seed} FUZZ_RUNS=${runs})\n`);
  return { seed, runs, timeoutMs: Number(process.env.FUZZ_TIMEOUT_MS ?? 10_000) };
}

export interface FuzzOutcome {
  target: string;
  cases: number;
  statuses: Record<number, number>;
  /** Wall time of the target, for the report only. */
  ms: number;
}

/** Counts rows of the given tables in one query. */
export class RowCounter {
  private readonly client: pg.Client;
  private connected?: Promise<void>;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
  }

  async count(tables: string[]): Promise<Record<string, number>> {
    if (tables.length === 0) return {};
    this.connected ??= this.client.connect().then(() => undefined);
    await this.connected;
    const sql = `SELECT ${tables.map((t, i) => `(SELECT count(*) FROM "${t.replace(/"/g, '')}")::int AS c${i}`).join(', ')}`;
    const row = (await this.client.query(sql)).rows[0] as Record<string, number>;
    return Object.fromEntries(tables.map((t, i) => [t, row[`c${i}`]]));
  }

  async close(): Promise<void> {
    if (this.connected) await this.client.end();
  }
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  text: string;
  headers: IncomingHttpHeaders;
}

/**
 * Sends one generated request on a connection of its own (a pooled keep-alive socket that the
 * server closed after an early answer would fail the next case with a client-side reset) and
 * with a hard deadline: a hang fails the property.
 */
export function sendFuzzRequest(baseUrl: string, method: string, path: string, req: FuzzRequest, headers: Record<string, string>, timeoutMs: number): Promise<FuzzAnswer> {
  const { headers: bodyHeaders, payload } = encodeBody(req.body);
  const url = new URL(`${baseUrl}${path}${req.query ? `?${req.query}` : ''}`);
  const sendBody = method !== 'GET' && method !== 'HEAD' && payload !== undefined;
  const allHeaders: Record<string, string | number> = { ...bodyHeaders, ...headers, ...req.headers };
  if (sendBody) allHeaders['content-length'] = Buffer.byteLength(payload);
  return new Promise<FuzzAnswer>((resolve, reject) => {
    let answered = false;
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error(`${method} ${path}: no answer within ${timeoutMs} ms (hung request)`));
    }, timeoutMs);
    const request = http.request(url, { method, headers: allHeaders, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => undefined);
      res.on('close', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
      });
    });
    request.on('error', (err: Error & { code?: string }) => {
      // The server may answer early (413) and close while the body is still being written.
      if (answered) return;
      clearTimeout(timer);
      reject(new Error(`${method} ${path}: ${err.code ?? ''} ${err.message}`));
    });
    if (sendBody) request.end(payload);
    else request.end();
  });
}

/** Why an answer breaks the contract, or null when it keeps it. */
export function contractViolation(answer: FuzzAnswer, shape: AnswerShape): string | null {
  const { status } = answer;
  if (status >= 500) return `status ${status}`;
  if (status < 200 || (status >= 300 && status < 400 && shape !== 'html')) return `unexpected status ${status}`;
  if (status >= 300 && status < 400) return null;
  // Node's HTTP parser answers these itself, before any application code, with an empty body.
  if ((status === 431 || status === 414) && answer.text === '') return null;
  const isJson = answer.contentType.includes('json');
  if (status >= 200 && status < 300) {
    if (isJson && answer.text) {
      try {
        JSON.parse(answer.text);
      } catch {
        return '2xx with an unparsable JSON body';
      }
    }
    return null;
  }
  // 4xx
  if (shape === 'html' && answer.contentType.startsWith('text/html')) return null;
  if (!isJson) return `${status} with content type "${answer.contentType}" (expected JSON)`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `${status} with an unparsable JSON body`;
  }
  if (shape === 'oauth' && isOAuthError(body)) return null;
  if (shape === 'oauth' && ![413, 415, 429].includes(status)) return `${status} body is not an RFC 6749 error: ${answer.text.slice(0, 200)}`;
  if (isDrfError(body)) return null;
  return `${status} body is not {"detail"} nor field errors: ${answer.text.slice(0, 200)}`;
}

export function isDrfError(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const entries = Object.entries(body);
  if (entries.length === 0) return false;
  // `detail`, possibly with lists of messages beside it (an XLSForm conversion failure: `errors`, `warnings`).
  if ('detail' in body) {
    return typeof (body as { detail: unknown }).detail === 'string' && entries.every(([k, v]) => k === 'detail' || (Array.isArray(v) && v.every((m) => typeof m === 'string')));
  }
  return entries.every(([, v]) => Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string'));
}

export function isOAuthError(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (typeof b.error !== 'string' || !/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/.test(b.error)) return false;
  // RFC 6749 §5.2 names error, error_description and error_uri; providers may add members
  // (oidc-provider adds `scope` to invalid_scope), which clients ignore.
  return (b.error_description === undefined || typeof b.error_description === 'string') && (b.error_uri === undefined || typeof b.error_uri === 'string');
}

export interface FuzzRunOptions {
  baseUrl: string;
  settings: FuzzSettings;
  rows?: RowCounter;
  /** Things a finished request must not leave behind (temporary upload files): listed after every case. */
  leftovers?: () => string[];
}

/**
 * Runs one target: `runs × weight` generated requests, each checked against the contract and,
 * when refused, against the row counts taken just before. Requests run one at a time so the
 * counts belong to that request. Throws fast-check's report (seed, path, counterexample).
 */
export async function fuzzTarget(target: FuzzTarget, options: FuzzRunOptions): Promise<FuzzOutcome> {
  const outcome: FuzzOutcome = { target: target.name, cases: 0, statuses: {}, ms: 0 };
  const started = Date.now();
  const numRuns = Math.max(1, Math.round(options.settings.runs * (target.weight ?? 1)));
  await fc.assert(
    fc.asyncProperty(target.input, async (req) => {
      const prepared = typeof target.path === 'string' ? target.path : await target.path();
      const { path, headers } = typeof prepared === 'string' ? { path: prepared, headers: {} } : prepared;
      const before = options.rows && target.tables ? await options.rows.count(target.tables) : undefined;
      const answer = await sendFuzzRequest(options.baseUrl, target.method, req.path ?? path, req, { ...target.headers, ...headers }, options.settings.timeoutMs);
      outcome.cases++;
      outcome.statuses[answer.status] = (outcome.statuses[answer.status] ?? 0) + 1;
      const violation = contractViolation(answer, target.answers);
      if (violation) throw new Error(`${target.name}: ${violation}\nbody: ${answer.text.slice(0, 500)}`);
      const left = options.leftovers?.() ?? [];
      if (left.length) throw new Error(`${target.name}: answered ${answer.status} and left ${left.length} file(s) behind: ${left.slice(0, 3).join(', ')}`);
      if (before && answer.status >= 400) {
        const after = await options.rows!.count(target.tables!);
        for (const t of target.tables!) if (after[t] !== before[t]) throw new Error(`${target.name}: refused with ${answer.status} but ${t} went from ${before[t]} to ${after[t]} rows`);
      }
    }),
    { seed: options.settings.seed, numRuns, endOnFailure: true, verbose: 0, reporter: reportBriefly },
  );
  outcome.ms = Date.now() - started;
  if (process.env.FUZZ_VERBOSE) process.stdout.write(`fuzz: ${target.name}: ${outcome.cases} cases in ${outcome.ms} ms\n`);
  return outcome;
}

/** fast-check's report with long counterexamples cut (a 200 kB string would flood the CI log). */
function reportBriefly<T>(details: fc.RunDetails<T>): void {
  if (!details.failed) return;
  const example = JSON.stringify(details.counterexample, (_k, v) => (typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}…(${v.length} chars)` : v));
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`Property failed after ${details.numRuns} cases (seed ${details.seed}, path "${details.counterexamplePath}").\nCounterexample: ${example?.slice(0, 2000)}\nCause: ${cause.slice(0, 2000)}`);
}

/** One line per target and a total; also appended to FUZZ_SUMMARY_FILE when set. */
export function fuzzSummary(suite: string, settings: FuzzSettings, outcomes: FuzzOutcome[]): string {
  const total = outcomes.reduce((n, o) => n + o.cases, 0);
  const lines = outcomes.map((o) => `  ${o.target}: ${o.cases} cases in ${(o.ms / 1000).toFixed(1)} s (${Object.entries(o.statuses).map(([s, n]) => `${s}×${n}`).join(' ')})`);
  const summary = `fuzz ${suite}: ${total} cases over ${outcomes.length} endpoints, seed ${settings.seed}, 0 contract violations`;
  const text = [...lines, summary].join('\n');
  if (process.env.FUZZ_SUMMARY_FILE) appendFileSync(process.env.FUZZ_SUMMARY_FILE, `${summary}\n`);
  return text;
}
