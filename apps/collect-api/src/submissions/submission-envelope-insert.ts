/**
 * The envelope row of an encrypted submission, written by intake's one statement with the
 * submission itself (docs/encryption.md, "How an envelope is stored"): `pending` for an envelope
 * stored as received; `decrypted` for one decrypted on receipt, with `kept`, the attachment rows
 * of its `.enc` parts (their files written already), hidden from the start.
 */
export type EnvelopeStatementRow = {
  version: string | null;
  instanceId: string;
  keyId: string | null;
  manifest: string;
  parts: string[];
  decryption: 'pending' | 'decrypted';
  kept: Array<{ filename: string; name: string; mimetype: string; size: number }>;
};

/**
 * The CTEs of the checked insert (submissions.repository.ts) that write the envelope rows of the
 * instances it inserted (`inserted`, joined to its `input` by item number `n`) and, `withKept`,
 * the hidden attachment rows of their kept parts. The submission, its envelope and its parts
 * commit together: no reader sees an encrypted submission without its envelope. Parameter $17,
 * and $18 `withKept` (envelopeParams). An envelope stored as received keeps no parts: its
 * statement has no insert of them, as an insert of no rows still runs the attachments' statement
 * triggers. No ON CONFLICT: a new submission has no envelope yet, and a kept part's storage path
 * was claimed by creating its file, so a row holding it (a file removed by hand) fails the
 * statement (isAttachmentPathTaken) and nothing is stored.
 */
export function envelopeCtes(withKept: boolean): string {
  return `, enveloped AS (
       INSERT INTO submission_envelopes (submission_id, form_id, version, instance_id, key_id, manifest, parts, decryption, decrypted_at)
       SELECT ins.id, ins.form_id, x.version, x.instance_id, x.key_id, x.manifest, x.parts, x.decryption, CASE WHEN x.decryption = 'decrypted' THEN now() END
       FROM jsonb_to_recordset($17::jsonb) AS x(n int, version text, instance_id text, key_id text, manifest text, parts text[], decryption text)
         JOIN input i ON i.n = x.n
         JOIN inserted ins ON ins.form_id = i.form_id AND ins.uuid = i.uuid
       RETURNING submission_id
     )${withKept ? `, kept AS (
       INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath, deleted_at)
       SELECT ins.id, ins.form_id, y.filename, y.name, y.mimetype, y.size, NULL, now()
       FROM jsonb_to_recordset($18::jsonb) AS y(n int, filename text, name text, mimetype text, size bigint)
         JOIN input i ON i.n = y.n
         JOIN inserted ins ON ins.form_id = i.form_id AND ins.uuid = i.uuid
       RETURNING id
     )` : ''}`;
}

/** Parameters $17 and ($18, `withKept`) of envelopeCtes for the items of a statement (`n`: the item's number, from 1). */
export function envelopeParams(envelopes: Array<EnvelopeStatementRow | undefined>, withKept: boolean): string[] {
  const rows: unknown[] = [];
  const kept: unknown[] = [];
  envelopes.forEach((e, k) => {
    if (!e) return;
    const n = k + 1;
    rows.push({ n, version: e.version, instance_id: e.instanceId, key_id: e.keyId, manifest: e.manifest, parts: e.parts, decryption: e.decryption });
    for (const p of e.kept) kept.push({ n, filename: p.filename, name: p.name, mimetype: p.mimetype, size: p.size });
  });
  return withKept ? [JSON.stringify(rows), JSON.stringify(kept)] : [JSON.stringify(rows)];
}
