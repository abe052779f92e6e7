import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { Outcome } from '../encryption/decryption-failure.js';
import { parseManifest, type EnvelopeManifest } from '../encryption/manifest.js';
import { FormEncryptionRepository, type FormKeyRow } from '../form-encryption/form-encryption.repository.js';
import { FILE_STORAGE, type FileStorage } from '../storage/file-storage.js';
import { readAhead, wholeFile } from '../storage/read-ahead.js';
import { EnvelopeRepository, type DecryptionStatus, type EnvelopeListing, type EnvelopePart, type EnvelopeRow } from './envelope.repository.js';

/** An envelope with its stored parts (by manifest name) and the names still missing. */
export interface EnvelopeWithParts extends EnvelopeListing {
  stored: Map<string, EnvelopePart>;
  missing: string[];
}

/**
 * Reading stored envelopes (docs/encryption.md "How an envelope is stored"): what the decrypt
 * export and the Briefcase pull build on. No permission check here: callers check the form first.
 */
@Injectable()
export class EnvelopeStore {
  constructor(
    private readonly envelopes: EnvelopeRepository,
    private readonly keys: FormEncryptionRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
  ) {}

  /**
   * A page of a form's envelopes (live submissions), oldest first, after submission `afterId`,
   * with their parts; `next`: the id to go on after, null at the end (EnvelopeRepository.pageByForm).
   */
  async list(formId: number, o: { afterId?: number; limit: number; decryption?: DecryptionStatus }): Promise<{ envelopes: EnvelopeWithParts[]; next: number | null }> {
    const { rows, next } = await this.envelopes.pageByForm(formId, o);
    const parts = await this.envelopes.partsOf(rows.map((r) => r.submissionId));
    const bySubmission = new Map<number, Map<string, EnvelopePart>>();
    for (const p of parts) {
      let m = bySubmission.get(p.submissionId);
      if (!m) bySubmission.set(p.submissionId, (m = new Map()));
      m.set(p.name, p);
    }
    const envelopes = rows.map((r) => {
      const stored = bySubmission.get(r.submissionId) ?? new Map<string, EnvelopePart>();
      return { ...r, stored, missing: r.parts.filter((n) => !stored.has(n)) };
    });
    return { envelopes, next };
  }

  /** The envelope of one submission, or null when it was not an encrypted one. */
  find(submissionId: number): Promise<EnvelopeRow | null> {
    return this.envelopes.find(submissionId);
  }

  /** The stored parts of these submissions' envelopes. */
  partsOf(submissionIds: number[]): Promise<EnvelopePart[]> {
    return this.envelopes.partsOf(submissionIds);
  }

  /** The envelope's manifest, parsed (it was valid when stored). */
  manifestOf(envelope: Pick<EnvelopeRow, 'manifest'>): Outcome<EnvelopeManifest> {
    return parseManifest(envelope.manifest);
  }

  /** How the decrypted archive reads a part: whole when it is queued if it is small (readAhead). */
  readPartAhead(part: Pick<EnvelopePart, 'path' | 'size'>): () => Promise<Readable> {
    return readAhead(part.size, { storage: this.storage, path: part.path });
  }

  /** Where a part's file is on this machine (local storage), or null (an object store). */
  localPathOf(part: Pick<EnvelopePart, 'path'>): string | null {
    return this.storage.localPath?.(part.path) ?? null;
  }

  /** The whole ciphertext of a part (parts are at most ATTACHMENT_MAX_BYTES), in one buffer on local storage. */
  async partBytes(part: Pick<EnvelopePart, 'path'>): Promise<Buffer> {
    return (await wholeFile({ storage: this.storage, path: part.path }, Number.POSITIVE_INFINITY))!;
  }

  /** The key row an envelope was made for (mode, sealed private key), or null (self mode by an XLSForm setting, or no key). */
  keyOf(envelope: Pick<EnvelopeRow, 'formId' | 'keyId'>): Promise<FormKeyRow | null> {
    return envelope.keyId ? this.keys.find(envelope.formId, envelope.keyId) : Promise.resolve(null);
  }
}
