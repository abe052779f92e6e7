import { randomUUID } from 'node:crypto';
import { ConflictException, ForbiddenException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormAccessService, PERMISSION_DENIED, type FormAccess } from '../forms/form-access.service.js';
import { FormCache } from '../forms/form-cache.js';
import { FORM_ROLES, MIN_ROLE, roleAtLeast, type FormRole } from '../forms/roles.js';
import type { UploadedFile } from '../openrosa/multipart.js';
import type { XmlNode } from '../openrosa/xml.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { formatSubmissionTime } from '../wire-formats/api-time.js';
import { buildSubmissionJson, type SubmissionJson } from './submission-json.js';
import { renderInstanceXml } from './instance-xml.js';
import { canonicalJson, contentHashOf } from './submission-canonical.js';
import { METADATA_KEYS, stripUuidScheme } from './submission-record.js';
import { answersByValue, attachmentPlan, missingMedia, SubmissionAttachmentStore } from './submission-attachments.js';
import type { AttachmentEntity, SubmissionEntity, SubmissionRecord } from './submission.entity.js';
import { SubmissionEvents, type SubmissionEvent } from './submission-events.js';
import { SUBMISSION_OUTBOX, type SubmissionOutbox } from './submission-outbox.js';
import { SubmissionsRepository } from './submissions.repository.js';
import { storeNewWithFilesAlone, storeNewWithFilesAndEntity, type FilesStatementDeps } from './submission-files-statement.js';
import type { IntakeEnvelope } from '../encrypted-submissions/envelope-intake.js';
import type { SubmissionAck } from './submission.dto.js';
import { EntityIntakeService } from '../entities/intake/entity-intake.service.js';
import { entityInsertSql, isEntityInsertRace, type EntityInsertItem } from './submission-entity-insert.js';

export interface SubmissionResult {
  outcome: 'created' | 'updated' | 'duplicate';
  submission: SubmissionEntity;
  form: FormEntity;
  /** The content's `envelope` was recorded with the submission (its one statement). */
  envelopeRecorded?: boolean;
}

/** What intake stores for one attempt (SubmissionsService.receive); `envelope`: an encrypted instance's, recorded with it when one statement stores it. */
type Content = { record: SubmissionRecord; xml?: string; root?: XmlNode; files: UploadedFile[]; version?: string; envelope?: IntakeEnvelope };

export interface PageRequest {
  page: number;
  pageSize: number;
}

const SUBMIT_ROLES = FORM_ROLES.filter((r) => roleAtLeast(r, MIN_ROLE.submit));

/** The form or role read from FormCache no longer holds: resolve again from the database. */
class StaleFormAccess extends Error {}

@Injectable()
export class SubmissionsService {
  /**
   * The outbox CTE of the one-statement insert, the same function on every call: the repository
   * keeps its group commit (and statement texts) by it, without writing the SQL per submission.
   */
  private readonly createdRowsSql = (inserted: string, attached?: string): string => this.outbox.createdRowsSql(inserted, attached);
  /** The text of the one statement with entity work (submission-entity-insert.ts), with the outbox CTEs of both. */
  private readonly entityInsertSql = (): string => entityInsertSql(this.outbox.createdRowsSql('inserted'), this.entities.statementRowsSql('changed'));
  private readonly entityFilesSql = (): string => entityInsertSql(this.outbox.createdRowsSql('inserted', 'attached'), this.entities.statementRowsSql('changed'), true);

  constructor(
    private readonly repo: SubmissionsRepository,
    private readonly access: FormAccessService,
    private readonly formCache: FormCache,
    private readonly events: SubmissionEvents,
    @Inject(SUBMISSION_OUTBOX) private readonly outbox: SubmissionOutbox,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    private readonly config: CollectConfig,
    private readonly attachments: SubmissionAttachmentStore,
    private readonly entities: EntityIntakeService,
  ) {
    this.filesStatement = { repo, storage, attachments, outbox, outboxSql: this.createdRowsSql };
  }

  /** The one-statement path with files (submission-files-statement.ts) with this service's own. */
  private readonly filesStatement: FilesStatementDeps;

  /**
   * Intake: the form and role as `resolve` finds them (from FormCache first), then `submit`.
   * When the instance's checked insert finds the cached view stale, the form is resolved again
   * from the database and the submission stored against that (docs/forms.md, "Intake").
   * `content` is called once per attempt and must return a record of that attempt's own: storing
   * takes the metadata keys (`meta/instanceID`, ...) out of it.
   */
  async receive(
    user: AuthenticatedUser,
    resolve: (fresh: boolean) => Promise<FormAccess>,
    content: (form: FormEntity) => Content,
  ): Promise<SubmissionResult> {
    for (let attempt = 0; ; attempt++) {
      const fresh = attempt > 0;
      const { form, role } = await resolve(fresh);
      try {
        return await this.submit({ user, form, role, ...content(form), fresh });
      } catch (err) {
        if (!(err instanceof StaleFormAccess)) throw err;
        // Fresh reads that go stale again at once: the form or share is changing right now.
        if (attempt >= 2) throw new ConflictException({ detail: 'The form changed while this submission was stored; send it again.' });
      }
    }
  }

  /**
   * Stores one submission (new, edit or duplicate) with its attachment files, in one
   * transaction that also records the outbox (SubmissionOutbox port). Files are copied into
   * storage inside the transaction and removed again if it fails: no orphan files, no partial
   * records.
   */
  private async submit(input: Content & { user: AuthenticatedUser; form: FormEntity; role: FormRole; fresh: boolean }): Promise<SubmissionResult> {
    const { user, form } = input;
    // The form version the instance was made with (its root's `version`), else the current one (docs/forms.md, "Form versions").
    const version = input.version || form.version;
    if (version.length > 100) throw new FieldValidationError({ xml_submission_file: ['The instance version is longer than 100 characters.'] });
    // A form read from the cache may have been re-opened since: only a fresh read refuses.
    if (!form.acceptingSubmissions && !input.fresh) throw new StaleFormAccess();
    SubmissionsService.requireAccepting(form);
    // The record is this attempt's own (receive): the metadata keys are taken out of it in place,
    // no copy (a copy of a 250-answer record cost as much as the rest of its handling).
    const record = input.record;
    const instanceId = stripUuidScheme(typeof record['meta/instanceID'] === 'string' ? record['meta/instanceID'] : '') || randomUUID();
    const deprecatedId = typeof record['meta/deprecatedID'] === 'string' ? stripUuidScheme(record['meta/deprecatedID']) : '';
    for (const key of METADATA_KEYS) delete record[key];
    if (instanceId.length > 255) throw new FieldValidationError({ 'meta/instanceID': ['At most 255 characters.'] });
    // One copy of the keys serves the instance XML (their order) and then the canonical JSON
    // (in sorted order); that JSON is hashed and stored as the answers' JSON (jsonb keeps no key
    // order): written once (docs/architecture.md, "The submission record: one pass, few allocations").
    const keys = Object.keys(record);
    const xml = renderOrKeep(form, record, instanceId, deprecatedId, input.xml, keys);
    const jsonText = canonicalJson(record, keys);
    const hash = contentHashOf(jsonText);

    const row = { formId: form.id, uuid: instanceId, json: record, jsonText, xml, contentHash: hash, submittedById: user.id, version };
    const check = { version: form.version, superuser: user.isSuperuser, roles: SUBMIT_ROLES };
    // A form with entity blocks: its entity work commits with the row (docs/entities.md "Submissions").
    const declares = this.entities.declares(form);
    const isNew = !deprecatedId || deprecatedId === instanceId;
    // (An OpenRosa instance naming attachments still to come waits for them: the transactional path.)
    const aloneWithoutFiles = !input.files.length && isNew && !(input.xml && missingMedia(record, form, new Set()).length);
    if (aloneWithoutFiles && declares) {
      const alone = await this.storeWithEntityAlone(form, row, check, record, input.root ?? input.xml);
      if (alone) return alone;
    } else if (aloneWithoutFiles) {
      // A new instance without attachments (every JSON submission): ONE statement stores the row
      // and its outbox rows, no transaction around it (docs/architecture.md, "The walk of a
      // submission"). An instance that exists already takes the transactional path below.
      const { allowed, created, queued } = await this.repo.insertCheckedAlone(row, check, this.createdRowsSql);
      if (!allowed) throw new StaleFormAccess();
      if (created) {
        this.outbox.createdRowsWritten(queued);
        this.events.committed({ type: 'submission.created', formId: form.id, submissionId: created.id, instanceUuid: instanceId });
        return { outcome: 'created', submission: created, form };
      }
    }

    // Everything that reads outside the transaction happens before it: a transaction holding a
    // pool connection while waiting for a second one deadlocks under load (pool exhaustion).
    const role = input.role;
    const ownerName = input.files.length ? ((await this.formCache.username(form.ownerId)) ?? String(form.ownerId)) : '';
    // A new OpenRosa instance with all its attachments, held in memory, on storage that claims
    // paths by creating files (local disk): files first, then ONE statement, as a JSON submission;
    // with entity work, the entity statement (an envelope's form goes the transactional way).
    const filesAlone = input.files.length > 0 && isNew && !!this.storage.putBytesIfAbsent && input.files.every((f) => f.bytes) &&
      !missingMedia(record, form, new Set(input.files.map((f) => f.name))).length;
    if (filesAlone && declares && !input.envelope) {
      const alone = await this.storeWithEntityAlone(form, row, check, record, input.root ?? input.xml, { owner: ownerName, files: input.files });
      if (alone) return alone;
    } else if (filesAlone && !declares) {
      const stored = await storeNewWithFilesAlone(this.filesStatement, form, ownerName, row, check, input.files, input.envelope);
      if (stored === 'stale') throw new StaleFormAccess();
      if (stored) {
        this.events.committed({ type: 'submission.created', formId: form.id, submissionId: stored.id, instanceUuid: instanceId });
        return { outcome: 'created', submission: stored, form, ...(input.envelope ? { envelopeRecorded: true } : {}) };
      }
      // The instance exists (a duplicate, or more files for it), or a claimed path had a row: the transactional path answers.
    }
    const stored: string[] = [];
    let event: SubmissionEvent | null = null;
    const work = async (m: EntityManager): Promise<SubmissionResult> => {
      if (deprecatedId && deprecatedId !== instanceId) {
        const old = await this.repo.findByUuidForUpdate(m, form.id, deprecatedId);
        if (old && !old.deletedAt) {
          if (!roleAtLeast(role, MIN_ROLE.editSubmissions)) throw new ForbiddenException({ detail: PERMISSION_DENIED });
          const clash = await this.repo.findByUuidForUpdate(m, form.id, instanceId);
          if (clash) return this.duplicateOrConflict(m, clash, hash, form, ownerName, input.files, stored, user, role);
          const updated = await this.repo.replaceContent(m, old.id, { uuid: instanceId, json: record, xml, contentHash: hash, version });
          await this.attachments.store(m, form, ownerName, updated, record, input.files, stored, 'edit');
          await this.entities.afterStore(m, form, updated, record, input.xml);
          event = { type: 'submission.updated', formId: form.id, submissionId: updated.id, instanceUuid: instanceId };
          await this.outbox.record(m, event);
          return { outcome: 'updated' as const, submission: updated, form };
        }
        // An edit of an instance we never stored is stored as a new submission (as ODK servers do).
      }
      // One statement: the row, unless the instance exists, checked against the live form and
      // role, and with it the rows of its attachments at their plain storage paths.
      const planned = input.files.length ? attachmentPlan(form, ownerName, answersByValue(record), input.files, new Set()) : [];
      const { allowed, created, reserved } = planned.length
        ? await this.repo.insertCheckedWithAttachments(m, row, check, planned.map((p) => p.row))
        : await this.repo.insertChecked(m, row, check);
      if (!allowed) throw new StaleFormAccess();
      if (!created) {
        // The instance exists (stored before, or by a concurrent identical request that won the insert).
        const existing = await this.repo.findByUuidForUpdate(m, form.id, instanceId);
        return this.duplicateOrConflict(m, existing!, hash, form, ownerName, input.files, stored, user, role);
      }
      const present = await this.attachments.store(m, form, ownerName, created, record, input.files, stored, 'new', reserved);
      await this.entities.afterStore(m, form, created, record, input.xml);
      event = { type: 'submission.created', formId: form.id, submissionId: created.id, instanceUuid: instanceId };
      // The outbox rows of the rest services, in this transaction (SubmissionOutbox port, docs/restservices.md).
      // An OpenRosa submission split over several POSTs: its forward waits for the rest (docs/restservices.md, "Media wait").
      await this.outbox.record(m, event, { missingMedia: input.xml ? missingMedia(record, form, present) : [] });
      return { outcome: 'created' as const, submission: created, form };
    };
    let tx: EntityManager | null = null;
    try {
      const result = await this.repo.transaction(async (m) => {
        tx = m;
        try {
          return await work(m);
        } catch (err) {
          // Remove our files while the transaction still holds their rows: after the rollback
          // another submission may take the same path.
          await this.attachments.removeFiles(stored.splice(0));
          throw err;
        }
      });
      this.outbox.committed(tx!);
      if (event) this.events.committed(event);
      return result;
    } catch (err) {
      await this.attachments.removeFiles(stored.splice(0)); // only non-empty when the commit itself failed
      throw err;
    }
  }

  /**
   * A new submission whose entity work one statement can do (docs/entities.md, "Intake: one
   * statement"): the row, the entity and its version, the list's revision and the outbox rows of
   * both in ONE group-committed statement; `withFiles`, an OpenRosa instance's attachments held in
   * memory, written first and their rows in the same statement. Null: the statement declined (or
   * lost a race) and wrote nothing; the transactional path decides.
   */
  private async storeWithEntityAlone(
    form: FormEntity, row: EntityInsertItem['row'], check: EntityInsertItem['check'], record: SubmissionRecord, instance: XmlNode | string | undefined,
    withFiles?: { owner: string; files: UploadedFile[] },
  ): Promise<SubmissionResult | null> {
    const entity = this.entities.statementEntity(form, record, instance, row.submittedById);
    if (!entity) return null;
    let result;
    if (withFiles) {
      result = await storeNewWithFilesAndEntity(this.filesStatement, form, withFiles.owner, { row, check, entity }, withFiles.files, this.entityFilesSql);
      if (!result) return null;
    } else {
      try {
        result = await this.repo.insertCheckedAloneWithEntity({ row, check, entity }, this.entityInsertSql);
      } catch (err) {
        if (isEntityInsertRace(err)) return null;
        throw err;
      }
    }
    if (!result.allowed) throw new StaleFormAccess();
    if (!result.created) return null;
    this.outbox.createdRowsWritten(result.queued);
    // The submission is stored: a failed read after the commit leaves a held update to the held-update time bound, not the answer to a 500.
    const held = await result.held.catch(() => null);
    if (held) await this.entities.releaseHeldAfterStatement(held.listId, held.uuid);
    this.events.committed({ type: 'submission.created', formId: form.id, submissionId: result.created.id, instanceUuid: row.uuid });
    return { outcome: 'created', submission: result.created, form };
  }

  private async duplicateOrConflict(
    m: EntityManager, existing: SubmissionEntity, hash: string, form: FormEntity, owner: string, files: UploadedFile[], stored: string[],
    user: AuthenticatedUser, role: FormRole | null,
  ): Promise<SubmissionResult> {
    if (existing.contentHash !== hash || existing.deletedAt) {
      throw new ConflictException({ detail: 'A submission with this instanceID and different content exists; an edit must carry meta/deprecatedID.' });
    }
    // ODK Collect splits large submissions into several POSTs of the same XML with different
    // attachments: keep the ones not stored yet, nothing else changes and nothing is emitted.
    // Only the original submitter (or an editor, who may change the record anyway) adds files:
    // another dataentry user who learnt the instanceID must not add to someone else's record.
    if (files.length && existing.submittedById !== user.id && !roleAtLeast(role, MIN_ROLE.editSubmissions)) {
      const have = new Set((await this.repo.liveAttachmentsOf([existing.id], m)).map((a) => a.name));
      if (files.some((f) => !have.has(f.name))) {
        throw new ForbiddenException({ detail: 'Only the user who made this submission (or an editor) can add attachments to it.' });
      }
    }
    const before = stored.length;
    const present = await this.attachments.store(m, form, owner, existing, existing.json, files, stored, 'existing');
    // A later POST of a split submission: the created event waiting for these files may go now.
    if (stored.length > before) await this.outbox.attachmentsAdded(m, existing.id, missingMedia(existing.json, form, present));
    return { outcome: 'duplicate', submission: existing, form };
  }

  /** Soft delete: `_deleted_at` set, attachments hidden, `submission.deleted` emitted. */
  async delete(user: AuthenticatedUser | undefined, formPk: string, id: string): Promise<void> {
    const { form } = await this.access.requireRole(user, formPk, MIN_ROLE.view);
    const submission = await this.findLiveOr404(form.id, id);
    await this.access.requireRole(user, form.id, MIN_ROLE.editSubmissions);
    const event: SubmissionEvent = { type: 'submission.deleted', formId: form.id, submissionId: submission.id, instanceUuid: submission.uuid };
    const tx = await this.repo.transaction(async (m) => {
      await this.repo.softDelete(m, submission.id, new Date());
      await this.outbox.record(m, event);
      return m;
    });
    this.outbox.committed(tx);
    this.events.committed(event);
  }

  /**
   * The §2.2 JSON of one submission by id, without a permission check, or null when it does
   * not exist or is deleted. For background work (forwarders) that checked access earlier.
   */
  async loadSubmissionJson(submissionId: number): Promise<{ json: SubmissionJson; submission: SubmissionEntity; form: FormEntity } | null> {
    const submission = await this.repo.findAny(submissionId);
    if (!submission || submission.deletedAt) return null;
    // The form as the data pages read it: dropped from the cache when it changes (FormCache).
    const form = await this.formCache.liveById(submission.formId);
    if (!form) return null;
    return { json: (await this.toJsonMany(form, [submission]))[0], submission, form };
  }

  async toJsonMany(form: FormEntity, rows: SubmissionEntity[]): Promise<SubmissionJson[]> {
    const attachments = await this.repo.liveAttachmentsOf(rows.map((r) => r.id));
    const bySubmission = new Map<number, AttachmentEntity[]>();
    for (const a of attachments) bySubmission.set(a.submissionId, [...(bySubmission.get(a.submissionId) ?? []), a]);
    const names = await this.repo.usernames(rows.map((r) => r.submittedById));
    return rows.map((submission) =>
      buildSubmissionJson({
        submission, form, attachments: bySubmission.get(submission.id) ?? [],
        submittedBy: submission.submittedById ? (names.get(submission.submittedById) ?? null) : null,
        baseUrl: this.config.PUBLIC_BASE_URL,
      }),
    );
  }

  private async findLiveOr404(formId: number, id: string): Promise<SubmissionEntity> {
    const n = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    const submission = Number.isSafeInteger(n) ? await this.repo.findLive(formId, n) : null;
    if (!submission) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return submission;
  }

  /** 403 when the form's owner closed it (`downloadable: false`). */
  static requireAccepting(form: FormEntity): void {
    if (!form.acceptingSubmissions) throw new ForbiddenException({ detail: `Form "${form.idString}" is not accepting submissions.` });
  }

  static successBody(result: SubmissionResult): SubmissionAck {
    return {
      message: result.outcome === 'duplicate' ? 'Duplicate submission.' : 'Successful submission.',
      formid: result.form.idString,
      instanceID: `uuid:${result.submission.uuid}`,
      submissionDate: formatSubmissionTime(result.submission.dateCreated),
      markedAsCompleteDate: formatSubmissionTime(result.submission.dateModified),
    };
  }
}

/** The received XML stays as it was (ODK's bytes); JSON submissions get a rendered one. */
function renderOrKeep(form: FormEntity, record: SubmissionRecord, instanceId: string, deprecatedId: string, xml: string | undefined, keys: string[]): string {
  if (xml) return xml;
  const meta: Record<string, string> = { 'formhub/uuid': form.uuid.replace(/-/g, ''), 'meta/instanceID': `uuid:${instanceId}` };
  if (deprecatedId) meta['meta/deprecatedID'] = `uuid:${deprecatedId}`;
  return renderInstanceXml(form, record, meta, keys);
}

