// The child-process side of convertXlsFormInWorker: reads one workbook sent over IPC, converts
// it, sends the result back and exits.
import { convertXlsForm, type ConvertOptions } from './convert.js';

process.once('message', (msg: { data: Uint8Array; options: ConvertOptions }) => {
  convertXlsForm(msg.data, msg.options).then(
    (result) => process.send!({ ok: true, result }, () => process.exit(0)),
    (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) }, () => process.exit(0)),
  );
});
