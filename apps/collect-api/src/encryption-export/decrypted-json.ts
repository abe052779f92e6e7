import type { Writable } from 'node:stream';
import type { DecryptedSubmission } from './decrypted-submissions.js';
import { drainOrClose } from '../database/drain.js';

/**
 * `format: "json"`: an array of the decrypted answers (by xpath, as the data API gives them) with
 * `_id`, `_uuid`, `_submission_time`, `_version`, `_submitted_by`, `_xform_id_string`,
 * `_decryption` (`decrypted`, `incomplete`, `failed`), `_missing_files` and, when it failed,
 * `_decryption_error` (docs/encryption.md "Decrypting without a server-held key"). One write
 * per batch, then a wait while `out` is full.
 */
export async function writeDecryptedJson(idString: string, passes: AsyncIterable<DecryptedSubmission[]>, out: Writable): Promise<void> {
  out.write('[');
  let first = true;
  for await (const batch of passes) {
    if (out.destroyed) return;
    const text = batch
      .map((d) => {
        const e = d.envelope;
        const item = {
          ...(d.record ?? {}),
          _id: e.submissionId,
          _uuid: e.uuid,
          _submission_time: e.submissionTime.toISOString().slice(0, 19),
          _version: e.version ?? '',
          _submitted_by: e.submittedBy,
          _xform_id_string: idString,
          _decryption: d.status,
          _missing_files: d.missing,
          ...(d.error ? { _decryption_error: { reason: d.error.reason, message: d.error.message, ...(d.error.file ? { file: d.error.file } : {}) } } : {}),
        };
        const json = JSON.stringify(item);
        const sep = first ? '' : ',';
        first = false;
        return sep + json;
      })
      .join('');
    out.write(text);
    if (out.writableNeedDrain && !out.destroyed) await drainOrClose(out);
  }
  if (!out.destroyed) out.end(']');
}
