import type { AttachmentEntity } from './submission.entity.js';

/** An attachment row a new instance's insert writes (its storage path, unique). */
export type AttachmentReservation = Pick<AttachmentEntity, 'filename' | 'name' | 'mimetype' | 'size' | 'fieldXpath'>;

/**
 * The CTE `attached` of intake's inserts (the checked insert in submissions.repository.ts, the
 * entity statement in submission-entity-insert.ts): the attachment rows of the instances the
 * statement inserted (`inserted`, joined to its `input` by item number `n`), read by index from
 * six array parameters starting at `$first` (attachedParams). `onConflict` (the transactional
 * path): a path taken already is skipped; otherwise a taken path fails the whole statement
 * (unique violation) and nothing is stored.
 */
export function attachedCte(first: number, onConflict: boolean): string {
  const p = (k: number) => `$${first + k}`;
  return `attached AS (
       INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath)
       SELECT ins.id, ins.form_id, (${p(1)}::varchar[])[j], (${p(2)}::varchar[])[j], (${p(3)}::varchar[])[j], (${p(4)}::bigint[])[j], (${p(5)}::varchar[])[j]
       FROM generate_subscripts(${p(0)}::int[], 1) AS j
         JOIN input i ON i.n = (${p(0)}::int[])[j]
         JOIN inserted ins ON ins.form_id = i.form_id AND ins.uuid = i.uuid
       ${onConflict ? 'ON CONFLICT DO NOTHING' : ''}
       RETURNING *
     )`;
}

/** The six parameters of attachedCte for the items of a statement (item number `n` from 1, in order). */
export function attachedParams(items: ReadonlyArray<{ attachments?: AttachmentReservation[] }>): unknown[] {
  const files = items.flatMap((item, n) => (item.attachments ?? []).map((a) => ({ n: n + 1, a })));
  return [files.map((f) => f.n), files.map((f) => f.a.filename), files.map((f) => f.a.name), files.map((f) => f.a.mimetype), files.map((f) => f.a.size), files.map((f) => f.a.fieldXpath)];
}
