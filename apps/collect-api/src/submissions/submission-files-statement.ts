import type { IntakeEnvelope } from '../encrypted-submissions/envelope-intake.js';
import type { FormEntity } from '../forms/form.entity.js';
import type { UploadedFile } from '../openrosa/multipart.js';
import { safeStorageSegment, type FileStorage } from '../storage/file-storage.js';
import { answersByValue, attachmentPlan, claimStoragePath, type SubmissionAttachmentStore } from './submission-attachments.js';
import { isEntityInsertRace, type EntityInsertItem, type EntityInsertResult } from './submission-entity-insert.js';
import type { SubmissionOutbox } from './submission-outbox.js';
import type { SubmissionEntity } from './submission.entity.js';
import { isAttachmentPathTaken, type AttachmentReservation, type SubmissionsRepository } from './submissions.repository.js';

type Row = Parameters<SubmissionsRepository['insertCheckedAlone']>[0];
type Check = Parameters<SubmissionsRepository['insertCheckedAlone']>[1];

/** What the one-statement path with files works with (the submissions service's own). */
export interface FilesStatementDeps {
  repo: SubmissionsRepository;
  storage: FileStorage;
  attachments: SubmissionAttachmentStore;
  outbox: SubmissionOutbox;
  outboxSql: (inserted: string, attached?: string) => string;
}

/**
 * The one-statement path of a new OpenRosa instance with attachments (docs/forms.md, "Intake:
 * caches and one statement"): each file is written first at a storage path it claims by
 * creating it (the plain path, else a suffixed one: FileStorage.putBytesIfAbsent), then ONE
 * statement, outside any transaction and group-committed, stores the instance, its attachment
 * rows and its outbox rows, which see those rows. An encrypted instance's envelope row goes in
 * the same statement (`envelope`), with, for one decrypted on receipt, its `.enc` parts written
 * at `encrypted/<instance id>_<part>` in the form's folder and their rows hidden
 * (docs/encryption.md, "Server mode"). The files are whole before anything names them; when the
 * statement stores nothing they are removed. Null: nothing stored, because the instance exists or
 * a claimed path has a row already (its file removed by hand): the caller goes on with the
 * transactional path. `stale`: the cached form or role no longer holds (nothing stored).
 */
export async function storeNewWithFilesAlone(
  deps: FilesStatementDeps, form: FormEntity, owner: string, row: Row, check: Check, files: UploadedFile[], envelope?: IntakeEnvelope,
): Promise<SubmissionEntity | null | 'stale'> {
  const written: string[] = [];
  let kept = false;
  try {
    const { rows, keptParts } = await claimFiles(deps, form, owner, row, files, envelope, written);
    const stored = envelope
      ? await deps.repo.insertCheckedAloneWithEnvelope(row, check, rows, { ...envelope.row, decryption: envelope.decryption, kept: keptParts }, deps.outboxSql)
      : await deps.repo.insertCheckedAloneWithAttachments(row, check, rows, deps.outboxSql);
    const { allowed, created, queued } = stored;
    if (!allowed) return 'stale';
    if (!created) return null;
    kept = true;
    deps.outbox.createdRowsWritten(queued);
    return created;
  } catch (err) {
    if (isAttachmentPathTaken(err)) return null;
    throw err;
  } finally {
    if (!kept) await deps.attachments.removeFiles(written);
  }
}

/**
 * The same for a new instance with entity work the entity statement can do (docs/entities.md,
 * "Intake: one statement"): its files written first at paths they claim, then the entity
 * statement with their rows (entityInsertSql `withAttachments`, `text`). Null: nothing stored (the
 * statement declined, lost a race, or a claimed path had a row), the files removed: the caller
 * goes on with the transactional path. A result that is not `created` (stale form or role,
 * declined) stored nothing either, and its files are removed.
 */
export async function storeNewWithFilesAndEntity(
  deps: FilesStatementDeps, form: FormEntity, owner: string, item: Omit<EntityInsertItem, 'attachments'>, files: UploadedFile[], text: () => string,
): Promise<EntityInsertResult | null> {
  const written: string[] = [];
  let kept = false;
  try {
    const { rows } = await claimFiles(deps, form, owner, item.row, files, undefined, written);
    let result: EntityInsertResult;
    try {
      result = await deps.repo.insertCheckedAloneWithEntity({ ...item, attachments: rows }, text);
    } catch (err) {
      if (isEntityInsertRace(err)) return null;
      throw err;
    }
    kept = result.created !== null;
    return result;
  } finally {
    if (!kept) await deps.attachments.removeFiles(written);
  }
}

/**
 * Writes the instance's files side by side, each at the storage path it claims by creating it
 * (the plain path, else a suffixed one), and, for an envelope decrypted on receipt, its `.enc`
 * parts; answers their attachment rows. Every path written goes to `written` (for the caller to
 * remove when nothing is stored); every write settles before a failure is thrown.
 */
async function claimFiles(
  deps: FilesStatementDeps, form: FormEntity, owner: string, row: Pick<Row, 'json' | 'uuid'>, files: UploadedFile[], envelope: IntakeEnvelope | undefined, written: string[],
): Promise<{ rows: AttachmentReservation[]; keptParts: AttachmentReservation[] }> {
  // Every file written side by side: a file's creation mostly waits on the file system, not on
  // this process (docs/benchmarks.md, "encrypted-intake").
  const claim = async (plain: string, bytes: Buffer[], mimetype: string): Promise<string> => {
    const path = await claimStoragePath(plain, (p) => deps.storage.putBytesIfAbsent!(p, bytes, mimetype));
    written.push(path);
    return path;
  };
  const media = attachmentPlan(form, owner, answersByValue(row.json), files, new Set())
    .map(async ({ file, row: attachment }): Promise<AttachmentReservation> => ({ ...attachment, filename: await claim(attachment.filename, file.bytes!, file.mimetype) }));
  // The instance id names the parts' files: one instance per form, so a path of this submission alone.
  const dir = `${safeStorageSegment(owner)}/attachments/${form.id}_${form.idString}/encrypted/${safeStorageSegment(row.uuid).slice(0, 64)}_`;
  const parts = (envelope?.keep ?? [])
    .map(async (part): Promise<AttachmentReservation> => ({ fieldXpath: null, filename: await claim(`${dir}${safeStorageSegment(part.name)}`, part.bytes, part.mimetype), name: part.name, mimetype: part.mimetype, size: part.size }));
  const all = await Promise.allSettled<AttachmentReservation>([...media, ...parts]);
  const failure = all.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
  const values = all.map((r) => (r as PromiseFulfilledResult<AttachmentReservation>).value);
  return { rows: values.slice(0, media.length), keptParts: values.slice(media.length) };
}
