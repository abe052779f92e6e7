// The worker side of XlsFormConversion.parse: reads a large XForm off the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { HttpException } from '@nestjs/common';
import { XmlInputError, type InputLimits } from '../openrosa/xml.js';
import { parseXForm } from './form-definition.js';

const { xml, limits } = workerData as { xml: string; limits: InputLimits };
try {
  parentPort!.postMessage({ ok: true, parsed: parseXForm(xml, limits) });
} catch (err) {
  // A cap passed (INPUT_MAX_NODES, FORM_MAX_FIELDS: 413) keeps its status across the thread.
  const status = err instanceof HttpException ? err.getStatus() : undefined;
  const message = err instanceof HttpException ? String((err.getResponse() as { detail?: unknown }).detail ?? err.message) : err instanceof Error ? err.message : String(err);
  parentPort!.postMessage({ ok: false, inputError: err instanceof XmlInputError, status, message });
}
