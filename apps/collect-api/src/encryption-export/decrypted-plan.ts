import type { FormField } from '../forms/form.entity.js';
import { needsChoices, type ExportPlan } from '../exports/data-export.js';
import { allRepeats, mergeChoices, scopeTree, type Choice, type ExportOptions } from '../exports/export-columns.js';
import type { SubmissionExportRow } from '../submissions/submission-data.repository.js';
import type { SubmissionRecord } from '../submissions/submission.entity.js';
import type { DecryptedSubmission } from './decrypted-submissions.js';

/** What a plan is made of: the fields, declared choices, the row count and a fresh pass over the decrypted envelopes. */
export interface DecryptedSource {
  fields: FormField[];
  declaredChoices: ReadonlyMap<string, Choice[]>;
  total: number;
  maxSplitColumns: number;
  passes(): AsyncIterable<DecryptedSubmission[]>;
}

/** Thrown when split_select_multiples would make more columns than EXPORT_MAX_SPLIT_COLUMNS. */
export class TooManySplitColumns extends Error {}

/** An export row of a decrypted envelope (its answers as the stored JSON would hold them; `{}` when they could not be read). */
export function exportRow(d: DecryptedSubmission): SubmissionExportRow {
  const e = d.envelope;
  return {
    id: e.submissionId,
    uuid: e.uuid,
    json: JSON.stringify(d.record ?? {}),
    submission_time: e.submissionTime.toISOString().slice(0, 19),
    version: e.version ?? '',
    submitted_by: e.submittedBy,
    form_id: e.formId,
  };
}

/**
 * The CSV/XLSX writers' plan over decrypted envelopes (exports/data-export.ts): the repeat sizes
 * and the choices seen, which the plaintext export asks PostgreSQL for, are counted here in one
 * pass over the decrypted answers, made only when the form has repeats or the export splits
 * select-multiples (docs/encryption.md "Decrypting without a server-held key").
 */
export async function decryptedPlan(source: DecryptedSource, o: ExportOptions): Promise<ExportPlan> {
  const tree = scopeTree(source.fields);
  const repeats = allRepeats(tree);
  const split = needsChoices(source.fields, o);
  const repeatCounts = new Map<string, number>(repeats.map((r) => [r.xpath, 0]));
  const splitKeys = new Set(split.map((f) => f.xpath));
  const seen = new Map<string, Set<string>>(split.map((f) => [f.xpath, new Set<string>()]));
  const walk = (record: SubmissionRecord) => {
    for (const [key, value] of Object.entries(record)) {
      if (Array.isArray(value)) {
        if (repeatCounts.has(key)) repeatCounts.set(key, Math.max(repeatCounts.get(key)!, value.length));
        for (const item of value) walk(item);
      } else if (splitKeys.has(key)) {
        for (const token of value.split(/\s+/)) if (token) seen.get(key)!.add(token);
      }
    }
  };
  if (repeats.length || split.length) {
    for await (const batch of source.passes()) for (const d of batch) if (d.record) walk(d.record);
  }
  const choices = new Map<string, Choice[]>();
  let columns = 0;
  for (const f of split) {
    const merged = mergeChoices(source.declaredChoices.get(f.xpath), [...seen.get(f.xpath)!].sort());
    columns += merged.length;
    choices.set(f.xpath, merged);
  }
  if (columns > source.maxSplitColumns) throw new TooManySplitColumns();
  return {
    fields: source.fields,
    choices,
    repeatCounts,
    total: source.total,
    async *rows() {
      for await (const batch of source.passes()) yield batch.map(exportRow);
    },
  };
}
