import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { FormEntity } from '../forms/form.entity.js';
import type { UploadedFile } from '../openrosa/multipart.js';
import { FILE_STORAGE, safeStorageSegment, type FileStorage } from '../storage/file-storage.js';
import { announcedMedia, valuesOf } from './submission-record.js';
import type { SubmissionEntity, SubmissionRecord } from './submission.entity.js';
import { SubmissionsRepository, type AttachmentReservation } from './submissions.repository.js';

/**
 * The attachment files of a submission at intake: their storage paths (one per name, claimed so
 * that no two submissions share a file) and their rows (docs/forms.md, "Intake: caches and one
 * statement").
 */
@Injectable()
export class SubmissionAttachmentStore {
  private readonly logger = new Logger(SubmissionAttachmentStore.name);

  constructor(
    private readonly repo: SubmissionsRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  /**
   * Stores the attachment files of `submission` not stored yet, inside the intake transaction
   * `m`: each file's row reserves its storage path before the file is written (`stored` learns
   * every path written, for removal if the transaction fails). Returns the names the submission
   * has afterwards.
   */
  async store(
    m: EntityManager, form: FormEntity, owner: string, submission: SubmissionEntity, record: SubmissionRecord, files: UploadedFile[], stored: string[],
    kind: 'new' | 'existing' | 'edit', reserved: Set<string> = new Set(),
  ): Promise<Set<string>> {
    // Nothing to store: the callers only read the names after storing something.
    if (!files.length && kind !== 'edit') return new Set();
    const isEdit = kind === 'edit';
    // A row inserted by this transaction has no attachments yet.
    const live = kind === 'new' ? [] : await this.repo.liveAttachmentsOf([submission.id], m);
    const answers = answersByValue(record);
    const uploadedNames = new Set(files.map((f) => f.name));
    if (isEdit) {
      // An edit keeps files still named by an answer and not re-uploaded; others are hidden.
      await this.repo.hideAttachments(m, live.filter((a) => uploadedNames.has(a.name) || !answers.has(a.name)).map((a) => a.id));
    }
    const keep = new Set(isEdit ? live.filter((a) => !uploadedNames.has(a.name) && answers.has(a.name)).map((a) => a.name) : live.map((a) => a.name));
    for (const { file, row } of attachmentPlan(form, owner, answers, files, keep)) {
      keep.add(file.name);
      // The row reserves the path (unique index) before the file is written: a concurrent
      // submission with the same file name waits for our commit and then takes a suffixed
      // name, so no two records ever share (or overwrite) a file. The checked insert may have
      // reserved it already (`reserved`).
      // On local storage the file must also be created new (place): a path whose file exists
      // belongs to another submission (the one-statement path writes its files before its rows),
      // so the row is given back and another name tried.
      let path = row.filename;
      let mine = reserved.has(path);
      for (let attempt = 0; ; attempt++) {
        if (!mine) mine = await this.repo.reserveAttachment(m, { ...row, submissionId: submission.id, formId: form.id, filename: path });
        if (mine) {
          if (await this.place(path, file)) break;
          await this.repo.releaseAttachment(m, submission.id, path);
          mine = false;
        }
        if (attempt >= 5) throw new Error(`no free storage path for ${row.filename}`);
        path = withSuffix(row.filename, randomBytes(4).toString('hex'));
      }
      stored.push(path);
    }
    return keep;
  }

  /**
   * Writes `file` to `path` unless something is there (true); false: the path is another
   * submission's (local storage: another intake created the file first, its row follows).
   */
  private async place(path: string, file: UploadedFile): Promise<boolean> {
    const s = this.storage;
    if (file.bytes) {
      if (s.putBytesIfAbsent) return s.putBytesIfAbsent(path, file.bytes, file.mimetype);
      await s.putBytes(path, file.bytes, file.mimetype);
      return true;
    }
    // Local storage links a spooled file (exclusive); upload.cleanup() removes the spooled one.
    if (s.copyFileIfAbsent) return s.copyFileIfAbsent(path, file.tmpPath, file.mimetype);
    file.taken = await s.moveFile(path, file.tmpPath, file.mimetype);
    return true;
  }

  /** Removes stored files (a failed intake's), logging a file that will not go. */
  async removeFiles(paths: string[]): Promise<void> {
    await Promise.all(paths.map((p) => this.storage.delete(p).catch((e: unknown) => this.logger.warn({ err: e, path: p }, 'could not remove stored file'))));
  }
}

/** Each answer value and the first question (xpath) that gives it. */
export function answersByValue(record: SubmissionRecord): Map<string, string> {
  const answers = new Map<string, string>();
  for (const [xpath, value] of valuesOf(record)) if (!answers.has(value)) answers.set(value, xpath);
  return answers;
}

/**
 * The attachment rows of `files` not among `keep`, one per name (the first part of a name wins),
 * at their plain storage paths; `fieldXpath` is the question whose answer names the file (`answers`).
 */
export function attachmentPlan(form: FormEntity, owner: string, answers: Map<string, string>, files: UploadedFile[], keep: Set<string>): Array<{ file: UploadedFile; row: AttachmentReservation }> {
  const dir = `${safeStorageSegment(owner)}/attachments/${form.id}_${form.idString}`;
  const seen = new Set(keep);
  const plan: Array<{ file: UploadedFile; row: AttachmentReservation }> = [];
  for (const file of files) {
    if (seen.has(file.name)) continue;
    seen.add(file.name);
    plan.push({ file, row: { filename: `${dir}/${safeStorageSegment(file.name)}`, name: file.name, mimetype: file.mimetype, size: file.size, fieldXpath: answers.get(file.name) ?? null } });
  }
  return plan;
}

/** Announced attachments (media answers) not among `present`. */
export function missingMedia(record: SubmissionRecord, form: FormEntity, present: Set<string>): string[] {
  return [...announcedMedia(record, form.fields)].filter((name) => !present.has(name));
}

/**
 * Plain storage paths this process found taken (a bounded hint, emptied when full): a name every
 * submission of a form shares (an envelope's `submission.xml.enc`) is taken from the second
 * submission on, and trying it again cost each intake a failed exclusive create.
 */
const takenPaths = new Set<string>();
const TAKEN_PATHS_KEPT = 10_000;

/**
 * The storage path `plain`, else a suffixed one, that `create` could create (false: taken); a
 * plain path this process found taken before goes straight to a suffixed one. A few attempts,
 * then an error (random suffixes do not collide in practice).
 */
export async function claimStoragePath(plain: string, create: (path: string) => Promise<boolean>): Promise<string> {
  const known = takenPaths.has(plain);
  let path = known ? withSuffix(plain, randomBytes(4).toString('hex')) : plain;
  for (let attempt = 0; !(await create(path)); attempt++) {
    if (path === plain) {
      if (takenPaths.size >= TAKEN_PATHS_KEPT) takenPaths.clear();
      takenPaths.add(plain);
    }
    if (attempt >= 5) throw new Error(`no free storage path for ${plain}`);
    path = withSuffix(plain, randomBytes(4).toString('hex'));
  }
  return path;
}

function withSuffix(path: string, suffix: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? `${path.slice(0, dot)}-${suffix}${path.slice(dot)}` : `${path}-${suffix}`;
}
