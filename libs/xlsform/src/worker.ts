// Conversion off the event loop and out of the caller's process: each call runs in a child
// process with its own heap limit, so a large spreadsheet never holds the caller's event loop and
// a hostile one that exhausts memory ends only that child, never the API process (a worker
// thread shares the process: some V8 out-of-memory paths abort the whole process from a worker).
// docs/xlsform.md, "Converting off the event loop".
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type ConversionResult, type ConvertOptions } from './convert.js';
import { XlsFormConversionError } from './errors.js';

export interface WorkerOptions extends ConvertOptions {
  /** The conversion is stopped and the call rejected after this long (default 60 s). */
  timeoutMs?: number;
  /** Heap limit of the converting process in MiB (default 512). */
  maxHeapMb?: number;
}

// Built code runs dist/worker.js beside dist/worker-entry.js; under ts-jest the sources run from
// src/ and the child runs the built entry (pnpm test builds first).
const entry = import.meta.url.endsWith('.ts') ? new URL('../dist/worker-entry.js', import.meta.url) : new URL('./worker-entry.js', import.meta.url);

/** Raised when the converting process ends without an answer: out of memory, killed, or too slow. */
export class XlsFormWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XlsFormWorkerError';
  }
}

/**
 * The one way a helper process or thread ends: the first of its answer, its failure, its exit or
 * the timeout settles the promise (`onTimeout` after `timeoutMs`), then `stop` ends it if it still runs.
 * Answers `finish(fn)`, which runs `fn` only for the first call.
 */
function settleOnce(timeoutMs: number, onTimeout: () => void, stop: () => void): (fn: () => void) => void {
  let settled = false;
  const finish = (fn: () => void) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    fn();
    stop();
  };
  const timer = setTimeout(() => finish(onTimeout), timeoutMs);
  return finish;
}

/** Converts an .xlsx file in a child process; resolves with the same result as convertXlsForm. */
export function convertXlsFormInWorker(data: Uint8Array, options: WorkerOptions = {}): Promise<ConversionResult> {
  const { timeoutMs = 60_000, maxHeapMb = 512, ...convert } = options;
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(entry), [], {
      execArgv: [`--max-old-space-size=${maxHeapMb}`, `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(maxHeapMb / 32)))}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString('utf8');
    });
    const finish = settleOnce(timeoutMs, () => reject(new XlsFormWorkerError(`the conversion took longer than ${timeoutMs} ms`)), () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.once('message', (msg: { ok: true; result: ConversionResult } | { ok: false; error: string }) =>
      finish(() => (msg.ok ? resolve(msg.result) : reject(new Error(msg.error)))),
    );
    child.once('error', (err) => finish(() => reject(err)));
    child.once('exit', (code, signal) =>
      finish(() => {
        const oom = /heap out of memory|Allocation failed|invalid table size|invalid array length/i.test(stderr);
        reject(new XlsFormWorkerError(oom ? `the workbook needs more than ${maxHeapMb} MB of memory to convert` : `the converting process ended (${signal ?? `exit code ${code}`})`));
      }),
    );
    child.send({ data, options: convert });
  });
}

/**
 * Runs the worker script `entry` with `workerData` and resolves with the first message it
 * posts; rejects when it fails, exits first, or takes longer than `timeoutMs` (then it is
 * stopped). Its heap is capped at `maxHeapMb`. Also used by collect-api for other heavy reads.
 */
export function runInWorker<T>(entry: URL, workerData: unknown, options: { timeoutMs: number; maxHeapMb: number; transferList?: ArrayBuffer[] }): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(entry, { workerData, transferList: options.transferList, resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb } });
    const finish = settleOnce(options.timeoutMs, () => reject(new Error(`The worker took longer than ${options.timeoutMs} ms`)), () => void worker.terminate());
    worker.once('message', (msg: T) => finish(() => resolve(msg)));
    worker.once('error', (err) => finish(() => reject(err)));
    worker.once('exit', (code) => finish(() => reject(new Error(`The worker exited with code ${code}`))));
  });
}

/** Like convertXlsFormInWorker, but throws XlsFormConversionError when the form has errors. */
export async function convertXlsFormInWorkerOrThrow(data: Uint8Array, options: WorkerOptions = {}): Promise<ConversionResult & { xml: string }> {
  const result = await convertXlsFormInWorker(data, options);
  if (result.xml === null) throw new XlsFormConversionError(result.errors, result.warnings);
  return result as ConversionResult & { xml: string };
}
