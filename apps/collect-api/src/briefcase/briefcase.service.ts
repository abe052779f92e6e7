import { createHash } from 'node:crypto';
import { BadRequestException, Inject, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { EnvelopeRepository, type EnvelopeRow } from '../encrypted-submissions/envelope.repository.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { FormsService } from '../forms/forms.service.js';
import { FILE_STORAGE, FileNotFoundError, type FileStorage } from '../storage/file-storage.js';
import { announcedMedia, stripUuidScheme } from '../submissions/submission-record.js';
import { mediaDownloadUrls } from '../wire-formats/media-urls.js';
import { idChunkXml, submissionXml, type BriefcaseMediaFile } from './briefcase-xml.js';
import { BriefcaseRepository, type ListCandidate } from './briefcase.repository.js';
import { parseFormIdPath } from './form-id-path.js';

export const DEFAULT_ENTRIES = 100;
export const MAX_ENTRIES = 1_000;
/** Rows read per statement while a page looks for complete submissions. */
const SCAN_BATCH = 200;
const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'file']);

/** `c1-<last submission id>`: opaque to clients, who hand it back as they got it. */
const CURSOR = /^c1-(\d{1,10})$/;
const cursorOf = (lastId: number) => `c1-${lastId}`;

/**
 * ODK Briefcase's pull (docs/encryption.md "Briefcase pull"): the ids of a form's complete
 * submissions page by page, and each submission as stored (the manifest of an encrypted one)
 * with its files' MD5 and download addresses. Readonly and above.
 */
@Injectable()
export class BriefcaseService {
  private readonly logger = new Logger('Briefcase');

  constructor(
    private readonly repo: BriefcaseRepository,
    private readonly formsRepo: FormsRepository,
    private readonly forms: FormsService,
    private readonly access: FormAccessService,
    private readonly envelopes: EnvelopeRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  async submissionList(user: AuthenticatedUser, owner: string | null, q: { formId: string; numEntries?: number; cursor?: string }): Promise<string> {
    const limit = Math.min(q.numEntries ?? DEFAULT_ENTRIES, MAX_ENTRIES);
    let after = 0;
    if (q.cursor !== undefined && q.cursor !== '') {
      const m = CURSOR.exec(q.cursor);
      if (!m) throw new FieldValidationError({ cursor: ['Not a cursor this server gave out; start without one.'] });
      after = Number(m[1]);
    }
    const form = await this.form(user, owner, q.formId);
    const mediaFields = (await this.forms.fieldsOfAllVersions(form.id)).filter((f) => MEDIA_TYPES.has(f.type));
    const ids: string[] = [];
    // Incomplete submissions are passed over; the cursor moves past every row read, so the next
    // page continues after them (a pull ends on an empty page).
    for (;;) {
      const want = limit - ids.length;
      const rows = await this.repo.candidates(form.id, after, Math.max(want, SCAN_BATCH), { json: mediaFields.length > 0 });
      const envelopes = await this.envelopes.findMany(rows.map((r) => r.id));
      for (const row of rows) {
        after = row.id;
        if (isComplete(row, envelopes.get(row.id), mediaFields)) ids.push(`uuid:${row.uuid}`);
        if (ids.length >= limit) break;
      }
      if (ids.length >= limit || rows.length < Math.max(want, SCAN_BATCH)) break;
    }
    return idChunkXml(ids, cursorOf(after));
  }

  async downloadSubmission(user: AuthenticatedUser, owner: string | null, formIdPath: string, baseUrl: string): Promise<string> {
    const path = parseFormIdPath(formIdPath);
    if (!path) throw new FieldValidationError({ formId: ['Expected <form id>[@version=...]/<root>[@key=uuid:...].'] });
    const form = await this.form(user, owner, path.idString);
    const submission = await this.repo.findLive(form.id, stripUuidScheme(path.key));
    if (!submission) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const media: BriefcaseMediaFile[] = [];
    for (const a of await this.repo.liveAttachments(submission.id)) {
      const md5Hex = await this.md5Of(a.filename);
      if (md5Hex === null) {
        this.logger.warn({ attachment: a.id }, 'briefcase: stored file missing, left out');
        continue;
      }
      media.push({ filename: a.name, md5Hex, downloadUrl: mediaDownloadUrls(a, baseUrl, 'files').download_url });
    }
    return submissionXml(submission.xml, { instanceId: `uuid:${submission.uuid}`, submissionDate: submission.date_created.toISOString() }, media);
  }

  /**
   * The form by id_string: the owner's, on owner-scoped paths; else among the live forms with
   * that id_string the caller can see: the only one, the caller's own, or the one the caller was
   * given a role on first; a tie is a 400 (docs/forms.md, "Which form a read by id_string names").
   */
  private async form(user: AuthenticatedUser, owner: string | null, idString: string): Promise<FormEntity> {
    const notFound = () => new NotFoundException({ detail: NOT_FOUND_DETAIL });
    if (owner !== null) {
      const form = await this.formsRepo.findLiveByOwnerNameAndIdString(owner, idString);
      if (!form || !(await this.access.access(user, form.id))) throw notFound();
      return form;
    }
    const visible: FormEntity[] = [];
    for (const form of await this.formsRepo.findLiveByIdString(idString)) if (await this.access.access(user, form.id)) visible.push(form);
    if (visible.length <= 1) {
      if (!visible[0]) throw notFound();
      return visible[0];
    }
    const own = visible.find((f) => f.ownerId === user.id);
    if (own) return own;
    const granted = await this.formsRepo.rolesGrantedAt(user.id, visible.map((f) => f.id));
    const [first, second] = [...granted.entries()].sort((a, b) => a[1].getTime() - b[1].getTime());
    if (first && (!second || first[1].getTime() < second[1].getTime())) return visible.find((f) => f.id === first[0])!;
    throw new BadRequestException({ detail: `Several forms have the id ${idString}; use the owner's path /<username>/view/... to name one.` });
  }

  private async md5Of(filename: string): Promise<string | null> {
    try {
      const hash = createHash('md5');
      for await (const chunk of await this.storage.read(filename)) hash.update(chunk as Buffer);
      return hash.digest('hex');
    } catch (err) {
      if (err instanceof FileNotFoundError) return null;
      throw err;
    }
  }
}

/**
 * A submission is listed once all its files are in: for an encrypted one still encrypted, every
 * part its manifest names; otherwise (a plaintext one, or one decrypted on receipt, whose files
 * are then plaintext) every file its media answers name.
 */
function isComplete(row: ListCandidate, envelope: EnvelopeRow | undefined, mediaFields: FormField[]): boolean {
  const present = new Set(row.attachment_names);
  if (envelope && envelope.decryption !== 'decrypted') return envelope.parts.every((p) => present.has(p));
  if (!row.json) return true;
  // Only the answers: an envelope decrypted on receipt also carries `_encrypted` and `_decryption` (not text).
  const answers = Object.fromEntries(Object.entries(row.json).filter(([key]) => !key.startsWith('_')));
  for (const name of announcedMedia(answers, mediaFields)) if (!present.has(name)) return false;
  return true;
}
