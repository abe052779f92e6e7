// The worker side of XlsFormConversion.parse: reads a large XForm off the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { XmlInputError } from '../openrosa/xml.js';
import { parseXForm } from './form-definition.js';

try {
  parentPort!.postMessage({ ok: true, parsed: parseXForm((workerData as { xml: string }).xml) });
} catch (err) {
  parentPort!.postMessage({ ok: false, inputError: err instanceof XmlInputError, message: err instanceof Error ? err.message : String(err) });
}
