import { Injectable, UnprocessableEntityException } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import { keyId, loadPublicKey } from '../encryption/rsa-keys.js';
import { submissionPublicKey } from '../encryption/xform-key.js';
import { EnvelopeStore } from '../encrypted-submissions/envelope-store.js';
import { writeCsv, writeXlsx } from '../exports/data-export.js';
import type { ExportOptions } from '../exports/export-columns.js';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormsService } from '../forms/forms.service.js';
import { MIN_ROLE } from '../forms/roles.js';
import { DecryptExportRepository } from './decrypt-export.repository.js';
import { DecryptKeys } from './decrypt-keys.js';
import type { DecryptExportDto, DecryptFormat } from './decrypt.dto.js';
import { writeDecryptedArchive } from './decrypted-archive.js';
import { writeDecryptedJson } from './decrypted-json.js';
import { decryptedPlan, TooManySplitColumns, type DecryptedSource } from './decrypted-plan.js';
import { decryptedSubmissions, type DecryptedSubmission, type OpenedEnvelopes } from './decrypted-submissions.js';

/** A checked request: the form, the keys it opened, the fields of every version. Lives as long as the request. */
export interface PreparedDecrypt {
  form: FormEntity;
  keys: Map<string, KeyObject>;
  fields: FormField[];
  opened: OpenedEnvelopes;
}

/**
 * The decrypt export (docs/encryption.md "Decrypting without a server-held key"): readonly and
 * above, with the passphrase or the private key in the request; the envelopes of the form
 * decrypted as they are read and written by the export writers of exports/ (CSV, XLSX), as JSON,
 * or as a ZIP of the decrypted media with `submissions.csv`. Nothing decrypted is stored.
 */
@Injectable()
export class DecryptExportService {
  constructor(
    private readonly access: FormAccessService,
    private readonly forms: FormsService,
    private readonly store: EnvelopeStore,
    private readonly keys: DecryptKeys,
    private readonly repo: DecryptExportRepository,
    private readonly config: CollectConfig,
  ) {}

  /** Checks access and opens the keys (400 for a wrong passphrase or key) before any byte is sent. */
  async prepare(user: AuthenticatedUser, pk: string, dto: DecryptExportDto): Promise<PreparedDecrypt> {
    const { form } = await this.access.requireRole(user, pk, MIN_ROLE.view);
    const spki = submissionPublicKey(form.xml);
    const current = spki ? loadPublicKey(spki) : null;
    const keys = await this.keys.open(form.id, current?.ok ? keyId(current.value) : null, dto);
    return { form, keys, fields: await this.forms.fieldsOfAllVersions(form.id), opened: new Map() };
  }

  /**
   * Plans the export (a pass over the answers when the form has repeats or splits choices; 422
   * as the plaintext export) and returns its writer: errors come before the first byte.
   */
  async writer(p: PreparedDecrypt, format: DecryptFormat, o: ExportOptions): Promise<(out: Writable) => Promise<void>> {
    // The zip checks the signatures of envelopes with media: they are unwrapped with their keys, in the first pass.
    const signatures = format === 'zip';
    const passes = (answers: boolean) => (): AsyncIterable<DecryptedSubmission[]> => decryptedSubmissions(this.store, p.form.id, p.keys, p.fields, p.opened, { answers, signatures });
    if (format === 'json') return (out) => writeDecryptedJson(p.form.idString, passes(true)(), out);
    const source: DecryptedSource = {
      fields: p.fields,
      declaredChoices: await this.forms.choicesOfAllVersions([p.form.id]),
      total: await this.repo.envelopeCount(p.form.id),
      maxSplitColumns: this.config.EXPORT_MAX_SPLIT_COLUMNS,
      passes: passes(true),
    };
    let plan;
    try {
      plan = await decryptedPlan(source, o);
    } catch (err) {
      if (err instanceof TooManySplitColumns) {
        throw new UnprocessableEntityException({ detail: `split_select_multiples would make more than ${this.config.EXPORT_MAX_SPLIT_COLUMNS} choice columns (EXPORT_MAX_SPLIT_COLUMNS); export without it.` });
      }
      throw err;
    }
    if (format === 'csv') return (out) => writeCsv(plan, o, out);
    if (format === 'xlsx') return (out) => writeXlsx(plan, o, out);
    return (out) => writeDecryptedArchive(plan, o, passes(false), this.store, out);
  }

}
