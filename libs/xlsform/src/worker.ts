// Conversion off the event loop: each call runs in a node:worker_threads worker, so a large
// spreadsheet never holds the caller's event loop (docs/xlsform.md, "Converting off the event loop").
import { Worker } from 'node:worker_threads';
import { type ConversionResult, type ConvertOptions } from './convert.js';
import { XlsFormConversionError } from './errors.js';

export interface WorkerOptions extends ConvertOptions {
  /** The worker is stopped and the call rejected after this long (default 60 s). */
  timeoutMs?: number;
  /** Heap limit of the worker in MiB (default 512). */
  maxHeapMb?: number;
}

// Built code runs dist/worker.js beside dist/worker-entry.js; under ts-jest the sources run from
// src/ and the worker runs the built entry (pnpm test builds first).
const entry = import.meta.url.endsWith('.ts') ? new URL('../dist/worker-entry.js', import.meta.url) : new URL('./worker-entry.js', import.meta.url);

/** Converts an .xlsx file in a worker thread; resolves with the same result as convertXlsForm. */
export function convertXlsFormInWorker(data: Uint8Array, options: WorkerOptions = {}): Promise<ConversionResult> {
  const { timeoutMs = 60_000, maxHeapMb = 512, ...convert } = options;
  const copy = new Uint8Array(data);
  return runInWorker<{ ok: true; result: ConversionResult } | { ok: false; error: string }>(entry, { data: copy, options: convert }, { timeoutMs, maxHeapMb, transferList: [copy.buffer] }).then((msg) => {
    if (!msg.ok) throw new Error(msg.error);
    return msg.result;
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
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`The worker took longer than ${options.timeoutMs} ms`))), options.timeoutMs);
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
