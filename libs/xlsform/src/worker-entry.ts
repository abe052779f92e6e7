// The worker side of convertXlsFormInWorker.
import { parentPort, workerData } from 'node:worker_threads';
import { convertXlsForm, type ConvertOptions } from './convert.js';

const { data, options } = workerData as { data: Uint8Array; options: ConvertOptions };
convertXlsForm(data, options).then(
  (result) => parentPort!.postMessage({ ok: true, result }),
  (err: unknown) => parentPort!.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) }),
);
